"""Release-note fragments say that a PR has a release note, not where it changed: svelte
W33 added a `.changeset/*.md` to every PR, and the digest said "Most of the work was in
.changeset". Each tool's folder is checked with fixtures of our own; the fragments still
count in a PR's files and lines."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.config import RepoConfig, TopicRule
from bot.engine import build_digest
from bot.engine.areas import folder_area, is_release_note, week_trunk
from bot.engine.classify import classify
from bot.engine.digest import answer_pull
from bot.engine.discover import suggest_topics
from bot.engine.summarize import summarize
from bot.i18n import translator
from bot.models import FileChange, PullRequest, Snapshot
from bot.render import render_digest
from testkit.pulls import merged_pull

MERGED = datetime(2026, 7, 15, 3, tzinfo=UTC)
WEEK = "2026-W29"

# One fragment of each tool, as its PRs add them.
FRAGMENTS = (
    ".changeset/soft-cats-comment.md",  # changesets
    "newsfragments/4521.bugfix.rst",  # towncrier
    "changelog.d/20260715_fix_retry.md",  # towncrier, scriv
    "releasenotes/notes/fix-retry-3f2a1c.yaml",  # reno
    ".changes/unreleased/Fixed-20260715.yaml",  # changie
    "doc/release/upcoming_changes/29123.improvement.rst",  # NumPy
    "packages/ui/.changelog/pr-6668.md",  # TDesign
)
# Code in three areas, one PR each and more.
CODE = ("src/app/router/match.py", "src/app/router/table.py", "src/app/cache/store.py",
        "src/app/cache/evict.py", "src/app/auth/token.py", "src/app/router/parse.py")


def _pull(number: int, title: str, paths: tuple[str, ...], *, lines: int = 40
          ) -> PullRequest:
    return merged_pull(number, title, paths, lines=lines, when=MERGED)


def _week(fragment: str) -> tuple[PullRequest, ...]:
    """Six fixes, each with a release note beside its code, in three folders."""
    folder = fragment.rsplit("/", 1)[0]
    return tuple(_pull(n, f"fix: repair case {n}", (f"{folder}/note-{n}.md", code))
                 for n, code in enumerate(CODE, start=1))


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_every_tools_fragment_is_a_release_note(fragment: str) -> None:
    assert is_release_note(fragment)


@pytest.mark.parametrize("path", ["docs/changes.md", "src/changes/diff.py",
                                  "doc/release/2.0.0-notes.rst", "changelog.py",
                                  "docs/CHANGELOG.md", "src/news.py"])
def test_other_files_are_no_release_notes(path: str) -> None:
    assert not is_release_note(path)


# A changelog every PR writes its line in: Seata's per-language files, a root one.
@pytest.mark.parametrize("path", ["changes/en-us/2.x.md", "changes/zh-cn/2.x.md",
                                  "CHANGELOG.md", "CHANGES.rst", "NEWS", "HISTORY.md"])
def test_a_running_changelog_is_a_release_note(path: str) -> None:
    assert is_release_note(path)


def test_a_changelog_every_pr_edits_is_not_the_weeks_most_changed_file() -> None:
    pulls = tuple(_pull(n, f"fix: repair case {n}", ("changes/en-us/2.x.md",
                                                     "changes/zh-cn/2.x.md", code))
                  for n, code in enumerate(CODE, start=1))
    digest = build_digest(Snapshot(repository="apache/incubator-seata", pulls=pulls), WEEK,
                          repo_config=RepoConfig(), lang="en")
    assert not any("changes/" in h.path for h in digest.hot_files)
    assert not any(t.title in ("en-us", "zh-cn", "changes") for t in digest.themes)


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_a_week_of_release_notes_is_read_by_its_code(fragment: str) -> None:
    digest = build_digest(Snapshot(repository="o/r", pulls=_week(fragment)), WEEK,
                          repo_config=RepoConfig(), lang="en")
    assert [t.title for t in digest.themes] == ["router", "cache", "Other changes"]
    assert {c.name for c in digest.topics} | {c.name for c in digest.areas} <= {
        "router", "cache", "auth"}
    text = render_digest(digest, "text")
    assert "Most of the work was in router and cache" in text
    folder = fragment.split("/", 1)[0]
    assert folder not in text.replace("github.com/o/r", "")


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_a_pr_of_release_notes_only_is_a_docs_change(fragment: str) -> None:
    assert folder_area([fragment], "r") == "docs"
    assert classify(_pull(1, "Add the note for the retry fix", (fragment,)),
                    RepoConfig()).type == "docs"
    # Beside tests only, it is a tests change.
    assert classify(_pull(1, "Cover retries", (fragment, "tests/test_retry.py")),
                    RepoConfig()).type == "test"


def test_release_notes_make_no_trunk() -> None:
    """Every OpenStack PR adds a reno note: `releasenotes` held more than half the week,
    and was taken for the folder all its areas sit in."""
    weeks = [[f"releasenotes/notes/note-{n}.yaml", code] for n, code in enumerate(CODE)]
    assert week_trunk(weeks, "r") == frozenset()


def test_the_most_changed_file_is_no_release_note() -> None:
    """A release removes the notes its PRs added: each note was changed by two PRs."""
    fixes = _week(FRAGMENTS[0])[:2]
    notes = [f.path for p in fixes for f in p.files if is_release_note(f.path)]
    release = _pull(9, "Version Packages", (*notes, "CHANGELOG.md"))
    digest = build_digest(Snapshot(repository="o/r", pulls=(*fixes, release)), WEEK,
                          repo_config=RepoConfig(), lang="en")
    assert [h.path for h in digest.hot_files] == []


def test_a_release_note_still_counts_in_a_prs_files_and_lines() -> None:
    pull = _pull(1, "fix: repair the router", (".changeset/soft-cats.md", CODE[0]), lines=200)
    answer = answer_pull(pull, repository="o/r", repo_config=RepoConfig(), lang="en")
    assert (answer.files, answer.lines) == (2, 400)
    digest = build_digest(Snapshot(repository="o/r", pulls=(pull,)), WEEK,
                          repo_config=RepoConfig(), lang="en")
    assert "2 files, 400 lines changed" in render_digest(digest, "text")


def test_a_topics_keywords_are_not_found_in_release_note_names() -> None:
    """A changeset's name is made of random words (`soft-cats-comment`)."""
    rule = RepoConfig(topics={"comments": TopicRule(keywords=("comment",))})
    pull = _pull(1, "fix: repair the router", (".changeset/soft-cats-comment.md", CODE[0]))
    assert classify(pull, rule).topics == ()


def test_init_suggests_no_release_note_folder_as_a_topic() -> None:
    pulls = _week(FRAGMENTS[0]) + _week(FRAGMENTS[3])
    names = {s.name for s in suggest_topics("o/r", pulls)}
    assert not names & {"changeset", ".changeset", "releasenotes", "notes"}


def test_a_summary_from_the_files_names_where_the_change_was_not_its_release_note() -> None:
    pull = PullRequest(number=18637, title="fix: keep css comments", url="u", state="merged",
                       additions=40, deletions=2,
                       files=(FileChange(path=".changeset/quiet-dogs-run.md"),
                              FileChange(path="packages/svelte/src/compiler/phases/css.js"),
                              FileChange(path="packages/svelte/src/compiler/phases/print.js")))
    summary, _ = summarize(pull, classify(pull, RepoConfig()), translator("en"))
    assert ".changeset" not in summary and "packages/svelte/src/compiler/phases" in summary
    assert "3 files" in summary  # the fragment still counts among the files
