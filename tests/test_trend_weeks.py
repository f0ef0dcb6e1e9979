"""The week before a digest's, read for its trends at the price of its counts: a first
run does not pay for two full weeks, the trends count the same, and the light copy
never stands in for the week itself."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from bot.clock import HeldClock
from bot.config import ChannelConfig, Config, RepoConfig, TopicRule
from bot.delivery.prefetch import prefetch_plan
from bot.delivery.shared_digests import SharedDigests
from bot.digests import Digests
from bot.github.budget import Budget
from bot.github.source import GitHubSource
from bot.source import SnapshotSource
from bot.store.cache import CachedSource
from bot.store.redis.cache import Cache
from bot.store.redis.client import sync_client
from bot.week import week_period
from testkit.clock import VirtualClock
from testkit.coordination import memory_port
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week

REPO = "acme/widgets"
TZ = "Asia/Shanghai"
WEEK, BEFORE = "2026-W29", "2026-W28"
TOKEN = "ghp_fake_token"
CONFIG = Config(repos={REPO: RepoConfig(timezone=TZ, topics={
    "rollout": TopicRule(keywords=("rollout",), paths=("**/rollout/**",)),
    "docs": TopicRule(paths=("docs/**",))})})


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        fake.add_repo(REPO, [*build_week(REPO, count=30, week=WEEK, tz=TZ),
                             *build_week(REPO, count=30, week=BEFORE, tz=TZ, seed=3,
                                         first_number=3000, decoys=0)])
        yield fake


def cached(github: FakeGitHub, redis_url: str) -> CachedSource:
    source = GitHubSource(CONFIG, token=TOKEN, base_url=github.base_url, budget=Budget())
    return CachedSource(source, Cache(sync_client(redis_url)), CONFIG,
                        clock=HeldClock(datetime.now(UTC)))


def spent(github: FakeGitHub, before: int) -> int:
    return github.points.spent() - before


async def test_a_first_run_reads_the_week_before_for_its_counts_only(
    github: FakeGitHub, redis_url: str
) -> None:
    source = cached(github, redis_url)
    source.fetch_week(REPO, WEEK)  # the week itself, in full (the prefetch)
    start = github.points.spent()
    digest = await Digests(CONFIG, source).build(REPO, WEEK, "en")
    trends_points = spent(github, start)
    # The same week before, read in full, and its own digest's counts.
    start = github.points.spent()
    full = GitHubSource(CONFIG, token=TOKEN, base_url=github.base_url).fetch_week(REPO, BEFORE)
    full_points = spent(github, start)
    last = await Digests(CONFIG, SnapshotSource(full)).build(REPO, BEFORE, "en", trends=False)
    counted = {t.name: t.count for t in last.topics}
    assert counted, "the week before has PRs on some topic"
    assert {t.name: t.previous for t in digest.topics} == {
        t.name: counted.get(t.name, 0) for t in digest.topics}
    assert 0 < trends_points * 2 < full_points, (trends_points, full_points)


async def test_the_counted_copy_never_stands_in_for_the_week_itself(
    github: FakeGitHub, redis_url: str
) -> None:
    source = cached(github, redis_url)
    light = source.fetch_trend_week(REPO, BEFORE).snapshot
    assert light.pulls and all(p.reviews is None and p.review_threads is None
                               for p in light.pulls)
    assert source.holds_trends_fresh(REPO, BEFORE) is True
    assert source.holds_fresh(REPO, BEFORE) is False
    start = github.points.spent()
    week = source.fetch_week(REPO, BEFORE).snapshot  # asked for itself: read in full
    assert spent(github, start) > 0
    assert [p.number for p in week.pulls] == [p.number for p in light.pulls]
    assert all(p.reviews is not None for p in week.pulls)
    start = github.points.spent()
    again = source.fetch_trend_week(REPO, BEFORE).snapshot  # the full week serves
    assert spent(github, start) == 0
    assert again.pulls == week.pulls


async def test_github_failing_serves_the_counts_read_before(
    github: FakeGitHub, redis_url: str
) -> None:
    source = cached(github, redis_url)
    first = source.fetch_trend_week(REPO, BEFORE).snapshot
    assert source.trends is not None
    entry = source.trends.get(REPO, BEFORE, TZ)
    assert entry is not None
    later = entry.fresh_until
    github.fail_next(100, 502)
    # GitHub's retries pass at once on a clock of their own.
    source.source.policy.clock = VirtualClock(datetime.now(UTC))  # type: ignore[attr-defined]
    assert isinstance(source.clock, HeldClock)
    source.clock.set(later)
    data = source.fetch_trend_week(REPO, BEFORE)
    assert data.stale and data.snapshot.pulls == first.pulls


def test_the_plan_prefetches_the_week_before_for_its_counts() -> None:
    config = Config(repos=CONFIG.repos, channels=(
        ChannelConfig(platform="slack", id="C1", repo=REPO, timezone=TZ),))
    fire = week_period(WEEK, TZ).until + timedelta(hours=9)  # Monday 09:00 after W29
    plan = prefetch_plan(config, config.channels, fire - timedelta(hours=6),
                         timedelta(hours=6))
    assert {(p.week, p.counted) for p in plan} == {(WEEK, False), (BEFORE, True)}


async def test_a_counted_prefetch_fills_what_the_post_then_reads_for_nothing(
    github: FakeGitHub, redis_url: str
) -> None:
    source = cached(github, redis_url)
    counts = SimpleNamespace(source_reads=0, digest_builds=0)
    shared = SharedDigests(Digests(CONFIG, source), source, memory_port(), counts,
                           lock_seconds=5)
    try:
        start = github.points.spent()
        assert await shared.prefetch(REPO, BEFORE, counted=True)
        counted_points = spent(github, start)
        assert not await shared.prefetch(REPO, BEFORE, counted=True)  # held fresh now
        start = github.points.spent()
        source.fetch_trend_week(REPO, BEFORE)
        assert spent(github, start) == 0
    finally:
        source.cache.close() if source.cache is not None else None
    start = github.points.spent()
    GitHubSource(CONFIG, token=TOKEN, base_url=github.base_url).fetch_week(REPO, BEFORE)
    assert 0 < counted_points * 2 < spent(github, start)
