"""Lines a tool writes make no change large: ant-design's seven-line Select fix came
with 380 lines of Jest snapshots and was "key: large change (466 lines)". And a
website's or a demo's change (`site:`, `demo:`) is docs, not a new feature."""

from __future__ import annotations

import msgspec
import pytest

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.engine.areas import is_generated
from bot.engine.classify import classify
from bot.engine.score import written_size
from bot.models import FileChange, PullRequest, Snapshot
from testkit.pulls import merged_pull


@pytest.mark.parametrize(("path", "generated"), [
    ("components/select/__tests__/__snapshots__/demo.test.tsx.snap", True),
    ("crates/uv/tests/it/snapshots/pip_install__basic.snap", True),
    ("tests/__snapshots__/test_api.ambr", True),
    ("api/v1/service_pb2.py", True), ("api/v1/service.pb.go", True),
    ("static/app.min.js", True), ("yarn.lock", True),
    ("components/select/style/index.ts", False), ("docs/snapshots.md", False),
    ("src/snapshot.py", False),
])
def test_files_a_tool_writes(path: str, generated: bool) -> None:
    assert is_generated(path) is generated


def _select_fix() -> PullRequest:
    snap = "components/select/__tests__/__snapshots__/demo.test.tsx.snap"
    return msgspec.structs.replace(
        merged_pull(1, "fix(Select): keep the clear icon aligned"),
        files=(FileChange(path="components/select/style/index.ts", additions=5, deletions=2),
               FileChange(path=snap, additions=380, deletions=79)),
        additions=385, deletions=81)


def test_a_fix_with_snapshots_is_measured_by_what_a_person_wrote() -> None:
    pull = _select_fix()
    assert written_size(pull) == (7, 1)
    digest = build_digest(Snapshot(repository="ant/design", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    reasons = " ".join(r for k in digest.key_pulls for r in k.reasons)
    assert "large change" not in reasons and "466" not in reasons, reasons


def test_a_change_large_in_what_a_person_wrote_says_githubs_totals() -> None:
    pull = merged_pull(2, "feat(listy): add the Listy component", (
        "components/listy/index.tsx", "components/listy/__tests__/__snapshots__/a.snap"),
        lines=400)
    digest = build_digest(Snapshot(repository="ant/design", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    reasons = [r for k in digest.key_pulls for r in k.reasons]
    assert "large change (800 lines in 2 files)" in reasons, reasons  # as the PR page


@pytest.mark.parametrize("title", ["site: add the AI contribution guide page",
                                   "demo: add drag-sorting demo",
                                   "demo(FloatButton): demo update",
                                   "examples: add a Next.js app"])
def test_a_website_or_demo_change_is_docs(title: str) -> None:
    assert classify(merged_pull(3, title), RepoConfig()).type == "docs"


@pytest.mark.parametrize(("title", "severe"), [
    ("codec: fix broken length_delimited builder doc examples", False),
    ("codec: fix frame decoding", True),
])
def test_what_went_wrong_in_a_doc_example_is_no_severe_fix(title: str, severe: bool) -> None:
    """tokio #8350 fixed doc examples whose frames came out corrupted: "fixes a
    corruption" would say the library had the bug."""
    body = ("The doc examples combined length_adjustment(0) with num_skip(0), so decoding "
            "returns a frame that includes the raw header, corrupting the following frame.")
    pull = merged_pull(8350, title, ("tokio-util/src/codec/length_delimited.rs",), body=body)
    digest = build_digest(Snapshot(repository="tokio-rs/tokio", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    said = " ".join((*digest.key_pulls[0].reasons, *digest.key_pulls[0].facts))
    assert ("corrupt" in said) is severe, said


def test_a_code_fix_naming_comments_keeps_its_symptom() -> None:
    body = "An unterminated block comment made the lexer crash on the next token."
    pull = merged_pull(9, "fix(lexer): handle unterminated block comments",
                       ("src/lexer.rs",), body=body)
    digest = build_digest(Snapshot(repository="o/r", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    said = " ".join((*digest.key_pulls[0].reasons, *digest.key_pulls[0].facts))
    assert "crash" in said, said
