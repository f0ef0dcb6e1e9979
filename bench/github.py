"""Requests and wall time of fetching one week of PRs from (fake) GitHub.

For weeks of 30 and 300 PRs (seeded fixtures with a few oversized PRs whose nested
lists need follow-up pages), against the fake GitHub on 127.0.0.1 with a fixed
latency per request, using the real PyGithub and a real redis-server:
- the GraphQL source behind the Redis cache: cold, warm, and after 10% of the PRs
  changed on GitHub;
- the REST fallback (no token), cold;
- the naive per-PR REST approach with PyGithub's objects: search, then pull, files,
  reviews, review comments and issue comments for each PR (no cache, so a warm or
  changed fetch costs it the same).
Targets: cold at most ceil(N/25)+2 requests, warm 0, changed proportional to the
change (a search for what changed, then the changed PRs 50 a request).

Then GitHub's points (the fake charges GitHub's documented formula): per repository of
30 PRs a week, some with many review threads, on the first run (the week and the week
before, for the trends) and on a weekly run (the week before is cached from last week),
and how many repositories one token-hour (5,000 points) serves, with today's queries
and with the previous shape (searches carrying 25 full PRs with
`reviewThreads(first: 50) { comments(first: 20) }`, priced by the same formula).
Target: >= 500 repositories per token-hour with a personal token.

Last, "what is waiting for review" (`bench.review_queue`): chats asking again and again
within the cache window, on two replicas sharing Redis - one search per chat and window,
one point each.

    python -m bench.github [--sizes 30,300] [--latency-ms 10] [--repos 20]
    python -m bench.github --sizes ""        # the points only
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from github import Auth, Github
from github.Issue import Issue
from github.PaginatedList import PaginatedList

from bench.github_points import points_rows
from bench.review_queue import queue_rows
from bot.clock import HeldClock
from bot.config import Config, RepoConfig
from bot.github.rest import week_queries
from bot.github.source import GitHubSource
from bot.models import Comment
from bot.store.cache import CachedSource
from bot.store.redis.cache import Cache
from bot.week import shift_week, week_period
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week, week_snapshot
from testkit.redis_server import private_redis

REPO = "acme/widgets"
WEEK = "2026-W29"
TZ = "Asia/Shanghai"
TOKEN = "ghp_bench_token"
CONFIG = Config(repos={REPO: RepoConfig(timezone=TZ)})


@dataclass
class Row:
    size: int
    approach: str
    requests: int
    seconds: float
    target: str


@contextmanager
def redis_url() -> Iterator[str]:
    """REDIS_URL when set, else a private redis-server for the run."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    with private_redis() as private:
        yield private


def measure(fake: FakeGitHub, run: Callable[[], Any]) -> tuple[int, float, Any]:
    fake.clear()
    start = time.perf_counter()
    result = run()
    return fake.count(), time.perf_counter() - start, result


def naive(fake: FakeGitHub) -> int:
    """The straightforward way: PyGithub objects, one PR at a time. Returns PRs seen."""
    github = Github(base_url=fake.base_url, auth=Auth.Token(TOKEN), per_page=100, retry=None,
                    seconds_between_requests=None, seconds_between_writes=None)
    period = week_period(WEEK, TZ)
    repo = github.get_repo(REPO)
    # PyGithub's `search_issues` still calls the legacy search GitHub is removing.
    numbers = [issue.number
               for query in week_queries(REPO, period.since, period.until, None)
               for issue in PaginatedList(Issue, github.requester, "/search/issues",
                                          {"q": query, "advanced_search": "true"})]
    for number in numbers:
        pull = repo.get_pull(number)
        for listing in (pull.get_files(), pull.get_reviews(), pull.get_review_comments(),
                        pull.get_issue_comments()):
            list(listing)
    github.close()
    return len(numbers)


def bench_size(size: int, latency: float, url: str) -> list[Row]:
    rows: list[Row] = []
    pulls = build_week(REPO, count=size)
    with FakeGitHub(token=TOKEN, latency=latency) as fake:
        fake.add_repo(REPO, pulls)
        expected = week_snapshot(REPO, pulls, WEEK, TZ)
        cache = Cache.from_url(url, prefix=f"prdigest-bench:{size}:v1")
        for key in cache.client.scan_iter(f"{cache.prefix}:*"):
            cache.client.delete(key)
        github = GitHubSource(CONFIG, token=TOKEN, base_url=fake.base_url)
        clock = HeldClock(datetime.now(UTC))
        source = CachedSource(github, cache, CONFIG, clock=clock)

        count, seconds, data = measure(fake, lambda: source.fetch_week(REPO, WEEK))
        assert data.snapshot.pulls == expected.pulls, "cold fetch differs from the fixture"
        rows.append(Row(size, "graphql + cache, cold", count, seconds,
                        f"<= {math.ceil(size / 25) + 2}"))

        count, seconds, data = measure(fake, lambda: source.fetch_week(REPO, WEEK))
        assert source.last == "warm"
        rows.append(Row(size, "graphql + cache, warm", count, seconds, "0"))

        merged = [p for p in expected.pulls if p.state == "merged"][3:]
        changed = merged[: size // 10]
        note = Comment(author="zoe", body="late note",
                       created_at=datetime.now(UTC).replace(microsecond=0))
        for pull in changed:
            fake.touch(REPO, pull.number, comments=(*(pull.comments or ()), note))
        clock.set(datetime.now(UTC) + timedelta(days=31))
        count, seconds, data = measure(fake, lambda: source.fetch_week(REPO, WEEK))
        assert source.last == "changed"
        now_expected = week_snapshot(REPO, list(fake.repos[REPO].pulls.values()), WEEK, TZ)
        assert data.snapshot.pulls == now_expected.pulls, "changed fetch differs"
        rechecks = sum(p.state != "merged" for p in expected.pulls)
        searches = max(math.ceil(rechecks / 40), 1)  # rechecked heads ride along, 40 a page
        rows.append(Row(size, f"graphql + cache, {len(changed)} changed (10%)", count,
                        seconds, f"{searches} search + ceil({len(changed)}/50) = "
                                 f"{searches + math.ceil(len(changed) / 50)}"))

        rest = GitHubSource(CONFIG, token=None, base_url=fake.base_url)
        count, seconds, snapshot = measure(fake, lambda: rest.fetch_week(REPO, WEEK))
        assert len(snapshot.pulls) == len(now_expected.pulls)
        rows.append(Row(size, "REST fallback (no token), cold", count, seconds, "-"))

        count, seconds, seen = measure(fake, lambda: naive(fake))
        assert seen == len(now_expected.pulls)
        rows.append(Row(size, "naive per-PR REST (PyGithub objects)", count, seconds,
                        "same every time"))
        for key in cache.client.scan_iter(f"{cache.prefix}:*"):
            cache.client.delete(key)
        cache.close()
        github.close()
        rest.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="30,300")
    parser.add_argument("--latency-ms", type=float, default=10.0,
                        help="added to every answer of the fake GitHub")
    parser.add_argument("--repos", type=int, default=20,
                        help="seeded repositories priced in GitHub points")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if sizes:  # `--sizes ""`: the points only
        print(f"One week of PRs from the fake GitHub on 127.0.0.1, {args.latency_ms:g} ms "
              "added per request; real PyGithub 2.x, real redis-server.")
        print(f"{'PRs':>4}  {'approach':<40} {'requests':>8} {'wall s':>8}  target")
        with redis_url() as url:
            for size in sizes:
                for row in bench_size(size, args.latency_ms / 1000, url):
                    print(f"{row.size:>4}  {row.approach:<40} {row.requests:>8} "
                          f"{row.seconds:>8.2f}  {row.target}")
        print()
    for line in points_rows(args.repos, WEEK, shift_week(WEEK, -1), TZ):
        print(line)
    print()
    for line in queue_rows():
        print(line)

if __name__ == "__main__":
    main()
