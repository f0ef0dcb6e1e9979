"""The weekly fetches spread over the hours before the posting minute, and paced by
GitHub's points: the post finds its week in the cache, and a post the points left
cannot cover waits for the refill and goes out late, never skipped."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from bot.clock import HeldClock
from bot.config import Config, GitHubConfig
from bot.delivery.prefetch import Prefetcher, prefetch_plan
from bot.delivery.schedule import Scheduler, ScheduleSettings
from bot.digests import Digests
from bot.github.budget import Budget
from bot.github.source import GitHubSource
from bot.store.cache import CachedSource
from bot.store.redis.cache import Cache
from bot.store.redis.client import sync_client
from bot.store.redis.coordination import RedisCoordination
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week
from testkit.schedule import FakePlatforms, FakePoster, at, make_config

REPO = "acme/lumen"
TOKEN = "ghp_fake_token"
# Monday 2026-07-20 in Shanghai: week 29 ended at 00:00, the post is at 09:00.
MONDAY_9 = at("2026-07-20T01:00")
MONDAY_8 = at("2026-07-20T00:00")
SUNDAY_20 = at("2026-07-19T12:00")
CHANNEL = {"platform": "slack", "id": "C1", "repo": REPO, "timezone": "Asia/Shanghai",
           "schedule": "0 9 * * MON", "lang": "en"}


def with_window(config: Config, hours: float) -> Config:
    return msgspec.structs.replace(
        config, server=msgspec.structs.replace(config.server, prefetch_hours=hours))


# --- the plan -------------------------------------------------------------------------------


def test_the_plan_spreads_the_finished_week_over_the_window_before_the_post() -> None:
    repos = [f"acme/r{i}" for i in range(40)]
    config = make_config([{**CHANNEL, "id": f"C{i}", "repo": r} for i, r in enumerate(repos)],
                         repos=repos)
    plan = prefetch_plan(config, config.channels, SUNDAY_20 + timedelta(hours=10),
                         timedelta(hours=6))
    assert {(p.repo, p.week) for p in plan} == {
        (r, w) for r in repos for w in ("2026-W29", "2026-W28")}
    # From 03:00 Shanghai (6 h before 09:00; the week ended at 00:00 and has settled)
    # to 80% of the way to the post.
    start, fire = at("2026-07-19T19:00"), MONDAY_9
    assert all(start <= p.at <= start + (fire - start) * 0.8 for p in plan)
    assert all(p.fire_at == fire for p in plan)
    moments = sorted(p.at for p in plan if p.week == "2026-W29")
    assert moments[-1] - moments[0] > timedelta(hours=3)  # spread, not all at once
    assert len(set(moments)) == len(moments)
    # every replica computes the same plan
    assert plan == prefetch_plan(config, config.channels, SUNDAY_20 + timedelta(hours=10),
                                 timedelta(hours=6))


def test_nothing_is_planned_before_the_window_or_for_a_week_that_has_not_settled() -> None:
    config = make_config([CHANNEL])
    assert prefetch_plan(config, config.channels, SUNDAY_20, timedelta(hours=6)) == []
    early = make_config([{**CHANNEL, "schedule": "30 0 * * MON"}])  # 00:30, week still settling
    assert prefetch_plan(early, early.channels, SUNDAY_20 + timedelta(hours=4),
                         timedelta(hours=6)) == []


def test_a_channel_of_several_repositories_has_each_of_them_fetched_ahead() -> None:
    repos = ["acme/lumen", "acme/vault", "acme/forge"]
    config = make_config([{**CHANNEL, "repo": "", "repos": repos}], repos=repos)
    plan = prefetch_plan(config, config.channels, MONDAY_8, timedelta(hours=6))
    assert {(p.repo, p.week) for p in plan} == {
        (r, w) for r in repos for w in ("2026-W29", "2026-W28")}
    assert all(p.fire_at == MONDAY_9 for p in plan)


class RecordingFetcher:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def prefetch(self, repo: str, week: str, *, counted: bool = False) -> bool:
        self.asked.append((repo, week))
        return True


async def test_the_prefetcher_asks_for_every_repository_of_a_combined_channel_and_warns_not(
    caplog: pytest.LogCaptureFixture
) -> None:
    repos = ["acme/lumen", "acme/vault"]
    config = with_window(make_config([{**CHANNEL, "repo": "", "repos": repos}], repos=repos), 6)
    fetcher = RecordingFetcher()
    prefetcher = Prefetcher(config, fetcher, window=timedelta(hours=6))
    with caplog.at_level(logging.INFO):
        prefetcher.start(MONDAY_8)
        await prefetcher.idle()
    assert sorted(fetcher.asked) == sorted((r, w) for r in repos
                                           for w in ("2026-W29", "2026-W28"))
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


# --- against the fake GitHub, through the cache -----------------------------------------------


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        week = build_week(REPO, count=30, week="2026-W29")
        before = build_week(REPO, count=20, week="2026-W28", first_number=2000, decoys=0)
        fake.add_repo(REPO, [*week, *before])
        yield fake


def parts(fake: FakeGitHub, redis_url: str, *, hours: float = 6.0,
          budget: Budget | None = None) -> tuple[Config, CachedSource, Budget]:
    config = with_window(make_config([CHANNEL]), hours)
    config = msgspec.structs.replace(config, github=GitHubConfig(api_url=fake.base_url))
    budget = budget or Budget()
    github = GitHubSource(config, token=TOKEN, base_url=fake.base_url, budget=budget)
    return config, CachedSource(github, Cache(sync_client(redis_url)), config), budget


async def test_the_week_is_fetched_before_the_post_which_reads_it_from_the_cache(
    redis_url: str, github: FakeGitHub
) -> None:
    config, source, budget = parts(github, redis_url)
    clock = HeldClock(SUNDAY_20)
    platforms = FakePlatforms(clock)
    port = RedisCoordination.from_url(redis_url)
    try:
        one = Scheduler(Digests(config, source), port, FakePoster(platforms, "r1"),
                        ScheduleSettings(replica="r1"), clock=clock,
                        budget=budget)
        assert await one.tick() == []
        await one.prefetcher.idle()
        assert github.count() == 0  # Sunday evening: no post within the window
        clock.set(MONDAY_8)
        assert await one.tick() == []  # nothing due yet...
        await one.prefetcher.idle()
        assert one.prefetcher.fetched == 2  # ...but the week and the week before are in
        asked = github.count()
        assert asked > 0
        clock.set(MONDAY_9)
        results = await one.tick()
        await one.prefetcher.idle()
        assert [r.status for r in results] == ["posted"]
        assert github.count() == asked  # the post asked GitHub nothing
        assert platforms.counts() == {("2026-W29", "slack:C1", REPO): 1}
    finally:
        await port.close()


async def test_with_no_window_the_post_fetches_the_week_itself(
    redis_url: str, github: FakeGitHub
) -> None:
    config, source, budget = parts(github, redis_url, hours=0)
    clock = HeldClock(MONDAY_8)
    port = RedisCoordination.from_url(redis_url)
    try:
        one = Scheduler(Digests(config, source), port, FakePoster(FakePlatforms(clock), "r1"),
                        ScheduleSettings(replica="r1"),
                        clock=clock, budget=budget)
        await one.tick()
        await one.prefetcher.idle()
        assert github.count() == 0
        clock.set(MONDAY_9)
        assert [r.status for r in await one.tick()] == ["posted"]
        assert github.count() > 0
    finally:
        await port.close()


async def test_short_of_points_the_prefetch_waits_and_the_post_goes_out_late(
    redis_url: str, github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    budget = Budget()
    refill = datetime.now(UTC) + timedelta(seconds=1.5)
    budget.record({"cost": 1, "remaining": 2, "resetAt": refill.isoformat()})
    config, source, budget = parts(github, redis_url, budget=budget)
    clock = HeldClock(MONDAY_8)
    platforms = FakePlatforms(clock)
    port = RedisCoordination.from_url(redis_url)
    try:
        one = Scheduler(Digests(config, source), port, FakePoster(platforms, "r1"),
                        ScheduleSettings(replica="r1"), clock=clock,
                        budget=budget)
        with caplog.at_level(logging.INFO):
            await one.tick()
            await one.prefetcher.idle()
            assert github.count() == 0 and one.prefetcher.fetched == 0
            assert any("wait for a later pass" in r.getMessage() for r in caplog.records)
            clock.set(MONDAY_9)
            started = time.monotonic()
            results = await one.tick()
        assert [r.status for r in results] == ["posted"]
        assert time.monotonic() - started >= 1.4  # waited for the refill
        late = [r.getMessage() for r in caplog.records if "go out late" in r.getMessage()]
        assert late and f"{REPO} 2026-W29" in late[0] and "2 point(s) left" in late[0]
        assert platforms.counts() == {("2026-W29", "slack:C1", REPO): 1}
    finally:
        await port.close()
