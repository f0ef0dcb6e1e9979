"""GitHub points per repository, measured on the fake GitHub (which charges GitHub's
documented formula), and the previous query shape priced by the same formula.

A realistic repository: 30 PRs a week with the fixtures' usual 0-4 review threads of
1-3 comments, plus a few busy PRs: 25 threads of 4 comments, 14 threads of 12, one
thread of 40 comments, and a PR of 130 files.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import msgspec

from bench.first_run import APP_LIMIT, ORG_REPOS, RepoPoints, first_run_rows
from bench.github_pool import pool_rows
from bot.config import Config, RepoConfig
from bot.github.budget import Budget
from bot.github.source import GitHubSource
from bot.models import PullRequest, ReviewThread, ThreadComment
from bot.week import shift_week
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week
from testkit.fakes.github_points import LIMIT

TOKEN = "ghp_bench_token"
BUSY = ((25, 4), (14, 12), (1, 40))
"""(threads, comments each) of the busy PRs of a week."""
OLD_FIRST = {"labels": 20, "files": 100, "reviews": 50, "threads": 50, "comments": 50}
OLD_THREAD_COMMENTS = 20
OLD_PAGE = 25
OLD_CONNECTIONS = 6  # labels, files, reviews, reviewThreads, comments, commits per PR


def _threads(pull: PullRequest, threads: int, comments: int) -> PullRequest:
    made = tuple(
        ReviewThread(path=f"src/m{t}.py", line=t + 1, resolved=t % 2 == 0, outdated=False,
                     comments=tuple(ThreadComment(author="reviewer", body=f"note {c}",
                                                  created_at=pull.created_at,
                                                  url=f"{pull.url}#discussion_r{t}{c}")
                                    for c in range(comments)))
        for t in range(threads))
    return msgspec.structs.replace(pull, review_threads=made)


def realistic_week(repo: str, week: str, tz: str, seed: int, first_number: int
                   ) -> list[PullRequest]:
    pulls = build_week(repo, count=30, week=week, tz=tz, seed=seed, overflow=None,
                       decoys=0, first_number=first_number)
    for index, (threads, comments) in enumerate(BUSY):
        pulls[index] = _threads(pulls[index], threads, comments)
    big = build_week(repo, count=4, week=week, tz=tz, seed=seed, decoys=0,
                     first_number=first_number + 3)[0]  # 130 files
    pulls[3] = msgspec.structs.replace(pulls[3], files=big.files,
                                       changed_files=len(big.files))
    return pulls


def _round_cost(requests: int) -> int:
    return max(1, int(requests / 100 + 0.5))


def old_points(pulls: Sequence[PullRequest]) -> int:
    """The previous shape by GitHub's formula: both searches ride in one request per
    page of 25 full PRs, each search 1 + 25 x (6 connections + 50 threads' comments)
    requests; follow-up rounds at their minimum of 1 point (so this is a lower bound)."""
    closed = sum(p.state != "open" for p in pulls)
    pages = [max(1, math.ceil(closed / OLD_PAGE)),
             max(1, math.ceil((len(pulls) - closed) / OLD_PAGE))]
    per_search = 1 + OLD_PAGE * (OLD_CONNECTIONS + OLD_FIRST["threads"])
    points = sum(_round_cost(per_search * sum(1 for p in pages if p > page))
                 for page in range(max(pages)))
    rounds = 0
    for pull in pulls:
        sizes = {"labels": len(pull.labels), "files": len(pull.files),
                 "reviews": len(pull.reviews or ()), "threads": len(pull.review_threads or ()),
                 "comments": len(pull.comments or ())}
        for key, size in sizes.items():
            rounds = max(rounds, math.ceil(max(size - OLD_FIRST[key], 0) / 100))
        for thread in pull.review_threads or ():
            rounds = max(rounds, math.ceil(max(len(thread.comments) - OLD_THREAD_COMMENTS, 0)
                                           / 100))
    return points + rounds


def _fetch_points(fake: FakeGitHub, config: Config, repo: str, week: str, *,
                  counted: bool = False) -> int:
    before = fake.points.spent()
    source = GitHubSource(config, token=TOKEN, base_url=fake.base_url, budget=Budget())
    if counted:
        source.fetch_counted_week(repo, week)
    else:
        source.fetch_week(repo, week)
    source.close()
    return fake.points.spent() - before


def measure_points(repos: int, week: str, previous: str, tz: str
                   ) -> tuple[list[RepoPoints], list[int], list[int]]:
    """Each seeded repository's points now, and the previous query shape's (first run,
    weekly run) by the same formula."""
    measured, old_first, old_weekly = [], [], []
    with FakeGitHub(token=TOKEN) as fake:
        for seed in range(repos):
            repo = f"acme/repo{seed}"
            this = realistic_week(repo, week, tz, seed, 1000)
            last = realistic_week(repo, previous, tz, seed + 500, 5000)
            fake.add_repo(repo, [*this, *last])
            config = Config(repos={repo: RepoConfig(timezone=tz)})
            measured.append(RepoPoints(
                weekly=_fetch_points(fake, config, repo, week),
                before_full=_fetch_points(fake, config, repo, previous),
                before_counted=_fetch_points(fake, config, repo, previous, counted=True)))
            old_weekly.append(old_points(this))
            old_first.append(old_points(this) + old_points(last))
    return measured, old_first, old_weekly


def points_rows(repos: int, week: str, previous: str, tz: str) -> list[str]:
    """The table: points per repository and repositories per token-hour, old and new,
    then the first run of an organisation against the prefetch window."""
    measured, old_first, old_weekly = measure_points(repos, week, previous, tz)
    weekly = [m.weekly for m in measured]

    def row(name: str, first: list[int], weekly: list[int]) -> str:
        mean_first, mean_weekly = statistics.mean(first), statistics.mean(weekly)
        return (f"{name:<44} {mean_first:>9.1f} {mean_weekly:>10.1f} "
                f"{LIMIT / mean_first:>11.0f} {LIMIT / mean_weekly:>11.0f} "
                f"{APP_LIMIT / mean_first:>11.0f}")

    return [
        f"GitHub points per repository ({repos} seeded repositories, 30 PRs a week, busy "
        f"PRs of {', '.join(f'{t}x{c}' for t, c in BUSY)} threads x comments and one of "
        "130 files), priced by GitHub's formula:",
        f"{'queries':<44} {'first run':>9} {'weekly run':>10} "
        f"{'PAT/h 1st':>11} {'PAT/h wk':>11} {'App/h 1st':>11}",
        row("now (week before read for its counts)",
            [m.weekly + m.before_counted for m in measured], weekly),
        row("week before read in full", [m.weekly + m.before_full for m in measured], weekly),
        row("previous (25 full PRs per search page)", old_first, old_weekly),
        f"(max weekly now: {max(weekly)} points; the week before for its counts: mean "
        f"{statistics.mean(m.before_counted for m in measured):.1f}, in full "
        f"{statistics.mean(m.before_full for m in measured):.1f}; repositories per hour = "
        f"points per hour / points per repository: a personal token (PAT) {LIMIT:,}, a "
        f"GitHub App installation at most {APP_LIMIT:,})",
        *first_run_rows(measured, ORG_REPOS, week, tz),
        *pool_rows(measured, shift_week(week, 1), tz),
    ]
