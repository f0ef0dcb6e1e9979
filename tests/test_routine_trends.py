"""Dependency updates and lock files do not make a week's focus: ten lock-file bumps
beside seven fixes in one package leave that package as where the work was."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.config import RepoConfig
from bot.engine.digest import build_digest
from bot.models import FileChange, PullRequest, Snapshot
from bot.render import render_digest

MERGED = datetime(2026, 7, 15, 8, tzinfo=UTC)


def _pull(number: int, title: str, paths: tuple[str, ...], author: str = "dev"
          ) -> PullRequest:
    return PullRequest(number=number, title=title, url=f"https://github.com/o/r/pull/{number}",
                       author=author, state="merged", merged_at=MERGED, closed_at=MERGED,
                       additions=20, deletions=0,
                       files=tuple(FileChange(path=p, additions=20) for p in paths))


BUMPS = tuple(_pull(100 + i, f"chore(deps): update dependency lib{i} to v{i + 2}",
                    ("package.json", "pnpm-lock.yaml"), author="renovate[bot]")
              for i in range(10))
FIXES = tuple(_pull(200 + i, f"fix(runtime-core): case {i}",
                    (f"packages/runtime-core/src/part{i}.ts", "pnpm-lock.yaml"))
              for i in range(7))
WEEK = Snapshot(repository="o/r", pulls=BUMPS + FIXES)


def test_the_focus_and_trends_leave_dependency_updates_out_and_shares_stay_of_the_week(
        ) -> None:
    digest = build_digest(WEEK, "2026-W29", repo_config=RepoConfig(), lang="en")
    lead = digest.areas[0]
    assert lead.name == "runtime-core" and lead.count == 7
    assert lead.share == round(7 / 17, 4)
    assert all(not set(c.pulls) & {p.number for p in BUMPS} for c in digest.areas)
    # A question about a topic still finds every PR that carries it.
    assert sum(c.count for c in digest.topics) >= 17
    text = render_digest(digest, "text")
    assert "runtime-core alone makes up 41% of the PRs" in text or \
        "Most of the work was in runtime-core, 41% of the PRs" in text
    assert "regression run" not in text  # no "focused build regression" for bumps


def test_a_lock_file_every_pr_touches_is_not_the_most_changed_file() -> None:
    digest = build_digest(WEEK, "2026-W29", repo_config=RepoConfig(), lang="en")
    assert all("lock" not in h.path for h in digest.hot_files)
