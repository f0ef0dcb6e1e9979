"""Titles, labels and configured topics decide a PR's type, modules and topics."""

from __future__ import annotations

import pytest

from bot.config import RepoConfig, TopicRule
from bot.engine.classify import classify, parse_title
from bot.models import FileChange, PullRequest


def _pull(title: str, *, body: str | None = None, paths: tuple[str, ...] = (),
          labels: tuple[str, ...] = ()) -> PullRequest:
    return PullRequest(
        number=1, title=title, url="https://github.com/o/r/pull/1", state="merged",
        body=body, labels=labels, files=tuple(FileChange(path=p) for p in paths),
    )


@pytest.mark.parametrize(
    ("title", "modules", "kind", "breaking", "text"),
    [
        ("[BREAKING][npu, ckpt] fix: drop old path", ("npu", "ckpt"), "fix", True, "drop old path"),
        ("[ci] chrore: fix veomni ci", ("ci",), "chore", False, "fix veomni ci"),
        ("[ckpt,rollout] feat: sharded sync", ("ckpt", "rollout"), "feat", False, "sharded sync"),
        ("[doc] chore: add news", ("doc",), "chore", False, "add news"),
        ("[Bugfix][KV Offloading] Fix stale jobs", ("kv-offloading",), "fix", False,
         "Fix stale jobs"),
        ("[Doc] Add DeepseekV32 to the list", (), "docs", False, "Add DeepseekV32 to the list"),
        ("[ROCm][CI] Cache Rust builds", ("rocm", "ci"), None, False, "Cache Rust builds"),
        ("feat(api)!: new endpoint", ("api",), "feat", True, "new endpoint"),
        ("Re-disable CUDA graph profiling", (), None, False, "Re-disable CUDA graph profiling"),
        ("fix: ratio: keep colons", (), "fix", False, "ratio: keep colons"),
    ],
)
def test_title_conventions(title: str, modules: tuple[str, ...], kind: str | None,
                           breaking: bool, text: str) -> None:
    parsed = parse_title(title)
    assert parsed.modules == modules
    assert parsed.type == kind
    assert parsed.breaking is breaking
    assert parsed.text == text


@pytest.mark.parametrize(
    ("title", "labels", "paths", "kind"),
    [
        ("Fix crash in loader", (), ("a.py",), "fix"),
        ("Add BertForMaskedLM support", (), ("a.py",), "feat"),
        ("Optimize Qwen3.5 on H20", (), ("a.py",), "perf"),
        ("Some change", ("bug",), ("a.py",), "fix"),
        ("Some change", (), ("docs/a.md", "README.md"), "docs"),
        ("Some change", (), ("tests/test_a.py",), "test"),
        ("Some change", (), ("src/a.py",), "other"),
        # Only documentation: a docs change whatever the title's type, as it is counted.
        ("improvement: modularize AGENTS.md contributor guides", (),
         ("AGENTS.md", "ui/AGENTS.md"), "docs"),
        ("feat: add the quick start", (), ("docs/start.md",), "docs"),
        ("feat: add the quick start", (), ("docs/start.md", "src/a.py"), "feat"),
        ('Revert "docs: move the guide"', (), ("docs/guide.md",), "revert"),
        # A loose type word (Seata's `optimize:`, SeaTunnel's `[Improve]`): the opening
        # verb says the kind where it says one.
        ("optimize: fix some typos in project", (), ("src/a.java",), "fix"),
        ("optimize: remove incompatible licenses at build time", (), ("pom.xml",),
         "refactor"),
        ("optimize: support shentong database", (), ("src/a.java",), "feat"),
        ("optimize: log args mismatch", (), ("src/a.java",), "perf"),
        ("[Improve] Fix memory usage when split size is large", (), ("src/a.java",), "fix"),
        ("[Improve] Update snapshot version to 2.3.9", (), ("pom.xml",), "chore"),
        ("feat: fix the retry", (), ("src/a.py",), "feat"),  # a strict type stays
        # What is added decides: optimizations are performance, a flag is a feature.
        ("Introduce micro-optimizations for model class building", (), ("src/a.py",),
         "perf"),
        ("Add an optimization flag", (), ("src/a.py",), "feat"),
    ],
)
def test_type_falls_back_to_labels_wording_and_files(
    title: str, labels: tuple[str, ...], paths: tuple[str, ...], kind: str
) -> None:
    assert classify(_pull(title, labels=labels, paths=paths), RepoConfig()).type == kind


NPU = RepoConfig(topics={"npu": TopicRule(keywords=("npu", "ascend"))})


@pytest.mark.parametrize(
    ("title", "body", "paths", "matches"),
    [
        ("[ci] update ascend tag", None, (), True),
        ("fix", "Fixes the crash on NPU.", (), True),
        ("fix", None, ("verl/utils/vllm/npu_vllm_patch.py",), True),
        ("fix", None, (".github/workflows/nightly_ascend.yml",), True),
        ("fix input handling", "the input is parsed", ("src/input.py",), False),
        ("fix", "unpunctual", (), False),
    ],
)
def test_configured_keywords_match_whole_words(
    title: str, body: str | None, paths: tuple[str, ...], matches: bool
) -> None:
    topics = classify(_pull(title, body=body, paths=paths), NPU).topics
    assert ("npu" in topics) is matches


def test_path_globs_match_at_any_depth_and_top_level() -> None:
    rule = RepoConfig(topics={"npu": TopicRule(paths=("**/npu/**",))})
    assert "npu" in classify(_pull("x", paths=("lumen/ops/npu/rotary.py",)), rule).topics
    assert "npu" in classify(_pull("x", paths=("npu/kernel.c",)), rule).topics
    assert "npu" not in classify(_pull("x", paths=("lumen/gpu/k.py",)), rule).topics


def test_labels_become_modules_unless_they_name_a_type() -> None:
    cls = classify(_pull("x", labels=("rollout", "bug")), RepoConfig())
    assert cls.modules == ("rollout",)
    assert cls.type == "fix"


def test_a_colon_after_the_tags_is_not_part_of_the_text() -> None:
    assert parse_title("[ROCm][Perf]: Part 1/2 -> fuse QK norm").text == "Part 1/2 -> fuse QK norm"
