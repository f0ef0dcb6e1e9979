"""A PR of lock files alone relocks dependencies: a dependency update, never key however
many lines it rewrites (pydantic W33 made "Update Pyodide lockfile", 776 lines of
`.github/pyodide/pylock.*.toml`, a key PR for its size). Fixtures of our own."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.engine.areas import folder_area, is_lock_file, lock_files_only
from bot.engine.classify import classify
from bot.models import Lang, PullRequest, Snapshot
from bot.render import render_digest
from testkit.pulls import merged_pull

MERGED = datetime(2026, 7, 15, 3, tzinfo=UTC)
WEEK = "2026-W29"
LOCKS = ("uv.lock", "poetry.lock", "Pipfile.lock", "package-lock.json", "yarn.lock",
         "pnpm-lock.yaml", "Cargo.lock", "go.sum", "composer.lock", "Gemfile.lock",
         "web/npm-lock.json", "frontend/bun.lock", ".github/pyodide/pylock.314.toml",
         "pylock.toml")


def _pull(number: int, title: str, paths: tuple[str, ...], *, lines: int = 400
          ) -> PullRequest:
    return merged_pull(number, title, paths, lines=lines, when=MERGED)


@pytest.mark.parametrize("path", LOCKS)
def test_every_tools_lock_file_is_one(path: str) -> None:
    assert is_lock_file(path)
    assert lock_files_only([path])


@pytest.mark.parametrize("path", ["go.mod", "package.json", "Cargo.toml", "pyproject.toml",
                                  "src/lock.py", "locks/mutex.rs", "clock.go",
                                  "docs/lockfile.md", "requirements.in"])
def test_manifests_and_code_are_no_lock_files(path: str) -> None:
    assert not is_lock_file(path)
    assert not lock_files_only([path])


def test_what_a_lock_is_compiled_from_goes_with_it_and_code_does_not() -> None:
    assert lock_files_only([".github/pyodide/pylock.31x.toml", ".github/pyodide/requirements.in",
                            ".changeset/relock.md"])
    assert not lock_files_only(["uv.lock", "src/app/main.py"])


def _week() -> tuple[PullRequest, ...]:
    return (
        _pull(1, "Update Pyodide lockfile", (".github/pyodide/pylock.314.toml",
                                             ".github/pyodide/pylock.31x.toml",
                                             ".github/pyodide/requirements.in")),
        _pull(2, "Fix Pyodide lockfile", (".github/pyodide/pylock.314.toml",
                                          ".github/pyodide/pylock.31x.toml")),
        _pull(3, "chore: relock", ("uv.lock",), lines=3000),
        _pull(4, "fix: keep the cache warm", ("src/app/cache.py", "uv.lock"), lines=40),
    )


def test_a_pr_of_lock_files_only_is_never_key_however_large() -> None:
    digest = build_digest(Snapshot(repository="o/r", pulls=_week()), WEEK,
                          repo_config=RepoConfig(), lang="en")
    assert [k.number for k in digest.key_pulls] == [4]
    dependencies = next(t for t in digest.themes if t.kind == "dependencies")
    assert sorted(dependencies.others) == [1, 2, 3]
    assert [h.path for h in digest.hot_files] == []
    # Where its lock files live says nothing of its kind: a dependency update, not CI.
    assert {c.name: c.count for c in digest.types} == {"build": 3, "fix": 1}
    assert all(c.name != "ci" for c in digest.topics)


@pytest.mark.parametrize(("lang", "line"), [
    ("en", "Dependency updates: 3 updates (Pyodide and lock files)"),
    ("zh", "依赖升级：3 个 PR（Pyodide 和锁文件）"),
])
def test_a_lock_file_update_that_names_nothing_updates_lock_files(lang: Lang, line: str
                                                                  ) -> None:
    digest = build_digest(Snapshot(repository="o/r", pulls=_week()), WEEK,
                          repo_config=RepoConfig(), lang=lang)
    assert line in render_digest(digest, "text")


def test_a_lock_file_names_no_area_beside_the_change_it_follows() -> None:
    assert folder_area(["web/src/app.ts", "yarn.lock"], "r") == "web"
    assert folder_area(["gin.go", "go.sum"], "gin") == "core"  # the code's, not the lock's
    assert folder_area(["package-lock.json"], "r") == "build"


def test_a_lock_file_update_is_classified_a_bump_of_type_build() -> None:
    cls = classify(_week()[0], RepoConfig())
    assert (cls.bump, cls.type) == (True, "build")
    assert not classify(_week()[3], RepoConfig()).bump
