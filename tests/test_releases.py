"""A week's releases are news: never key, but the summary names what was released
("Release PRs merged: 6.6.0 (#58929)." / "合并的发布 PR：6.6.0（#58929）。"), by the version a
title names or the packages a Changesets release lists."""

from __future__ import annotations

import msgspec
import pytest

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.engine.conventions import release_name
from bot.models import Lang, Snapshot
from bot.render import render_digest
from testkit.pulls import MERGED_W29, merged_pull

CHANGESETS_BODY = ("This PR was opened by the Changesets release GitHub action.\n\n"
                   "# Releases\n## svelte@5.56.9\n\n### Patch Changes\n\n- fix: a thing\n\n"
                   "## @sveltejs/kit@2.1.0\n")


@pytest.mark.parametrize(("title", "body", "name"), [
    ("Add changelog for 6.6.0", None, "6.6.0"),
    ("Prepare release v2.14.0b1", None, "v2.14.0b1"),
    ("Bump version to 0.12.2", None, "0.12.2"),
    ("Version Packages", CHANGESETS_BODY, "svelte@5.56.9, @sveltejs/kit@2.1.0"),
    ("Version Packages", "Nothing listed here.", "Version Packages"),
])
def test_a_release_is_named_by_what_it_releases(title: str, body: str | None,
                                                name: str) -> None:
    assert release_name(title, body) == name


@pytest.mark.parametrize(("lang", "said"), [
    ("en", "Release PRs merged: 6.6.0 (#2)."),
    ("zh", "合并的发布 PR：6.6.0（#2）。"),
])
def test_the_summary_names_the_weeks_release(lang: Lang, said: str) -> None:
    pulls = (merged_pull(1, "fix(Select): keep the clear icon aligned",
                         ("components/select/style.ts",)),
             merged_pull(2, "docs: add changelog for 6.6.0",
                         ("CHANGELOG.en-US.md", "package.json")))
    digest = build_digest(Snapshot(repository="ant/design", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang=lang)
    assert [k.number for k in digest.key_pulls] == [1]  # a release is never key
    for fmt in ("text", "markdown"):
        text = render_digest(digest, fmt)
        assert said in text, text


def test_a_week_without_a_release_says_nothing_of_one() -> None:
    pulls = (merged_pull(1, "fix: handle empty input", ("src/app.py",)),)
    digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    assert "Release PRs" not in render_digest(digest, "text")


def test_a_release_pr_not_merged_is_not_named() -> None:
    pulls = (merged_pull(1, "fix: handle empty input", ("src/app.py",)),
             msgspec.structs.replace(merged_pull(2, "Release v3.0.0", ("CHANGELOG.md",)),
                                     state="open", merged_at=None, closed_at=None,
                                     created_at=MERGED_W29))
    digest = build_digest(Snapshot(repository="o/r", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    assert digest.counts.total == 2 and "v3.0.0" not in render_digest(digest, "text")
