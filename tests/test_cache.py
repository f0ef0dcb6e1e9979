"""The Redis cache between the GitHub source and the engine: real redis-server, fake
GitHub, and the exact number of requests each kind of fetch makes."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from bot.clock import HeldClock
from bot.config import CacheConfig, Config, RepoConfig
from bot.errors import SourceError
from bot.events import CacheLookup, Events
from bot.github.policy import RetrySettings
from bot.github.source import GitHubSource
from bot.models import Comment, Snapshot
from bot.store.cache import HELD_SECONDS, CachedSource
from bot.store.redis.cache import Cache, cache_from_env
from bot.store.redis.client import sync_client
from bot.week import current_week, week_period
from testkit.clock import VirtualClock
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week, week_snapshot
from testkit.redis_server import free_port
from testkit.redis_topologies import all_keys

REDIS_TOPOLOGIES = ("single", "cluster")
"""Each Redis test here runs on one server and on a real Redis Cluster."""
REPO = "acme/widgets"
WEEK = "2026-W29"
TZ = "Asia/Shanghai"
TOKEN = "ghp_fake_token"
CONFIG = Config(repos={REPO: RepoConfig(timezone=TZ)})
LATER = timedelta(days=31)  # past the past-week TTL (30 days)


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


@pytest.fixture
def cache(redis_url: str) -> Iterator[Cache]:
    store = Cache.from_url(redis_url)
    yield store
    store.close()


def cached_source(fake: FakeGitHub, cache: Cache | None, *, token: str | None = TOKEN,
                  config: Config = CONFIG, retries: int = 3) -> CachedSource:
    github = GitHubSource(config, token=token, base_url=fake.base_url,
                          clock=VirtualClock(datetime.now(UTC)),
                          retry=RetrySettings(retries=retries))
    return CachedSource(github, cache, config, clock=HeldClock(datetime.now(UTC)))


def at(src: CachedSource, moment: datetime) -> CachedSource:
    """`src` with its clock set to `moment`."""
    assert isinstance(src.clock, HeldClock)
    src.clock.set(moment)
    return src


def now_on_github(fake: FakeGitHub, week: str = WEEK, tz: str = TZ) -> Snapshot:
    return week_snapshot(REPO, list(fake.repos[REPO].pulls.values()), week, tz)


def fetch(src: CachedSource, fake: FakeGitHub, *, now: datetime | None = None,
          week: str = WEEK) -> tuple[Snapshot, int]:
    """The week's snapshot and the number of HTTP requests it took."""
    fake.clear()
    data = at(src, now or datetime.now(UTC)).fetch_week(REPO, week)
    return data.snapshot, fake.count()


def later() -> datetime:
    return datetime.now(UTC) + LATER


# --- cold, warm, partly changed -----------------------------------------------------------


@pytest.mark.parametrize("count", [30, 300])
def test_cold_warm_and_changed_request_counts(fake: FakeGitHub, cache: Cache,
                                              count: int) -> None:
    pulls = build_week(REPO, count=count)
    fake.add_repo(REPO, pulls)
    src = cached_source(fake, cache)

    snapshot, cold = fetch(src, fake)
    assert snapshot.pulls == now_on_github(fake).pulls and src.last == "cold"
    closed = sum(p.state != "open" for p in snapshot.pulls)
    # both searches ride in one request per page of 100 numbers, then the PRs 50 a
    # request, plus one round of follow-ups
    assert cold == math.ceil(closed / 100) + math.ceil(count / 50) + 1 \
        <= math.ceil(count / 25) + 2

    snapshot, warm = fetch(src, fake, now=datetime.now(UTC) + timedelta(days=29))
    assert (warm, src.last) == (0, "warm")
    assert snapshot.pulls == now_on_github(fake).pulls

    # 10% of the week changes on GitHub: merged PRs get comments
    merged = [p for p in snapshot.pulls if p.state == "merged"][3:]
    changed = merged[:count // 10]
    note = Comment(author="zoe", body="late note",
                   created_at=datetime.now(UTC).replace(microsecond=0))
    for pull in changed:
        fake.touch(REPO, pull.number, comments=(*(pull.comments or ()), note))
    snapshot, partly = fetch(src, fake, now=later())
    assert src.last == "changed"
    assert snapshot.pulls == now_on_github(fake).pulls
    # the search for what changed (the recheck of open/closed PRs rides along, 40 a
    # request), then one request per 50 changed PRs
    recheck = sum(p.state != "merged" for p in snapshot.pulls)
    assert partly == max(math.ceil(recheck / 40), 1) + math.ceil(len(changed) / 50)
    sent = fake.requests[0].json()
    assert "updated:>=" in sent["variables"]["q0"]

    _, again = fetch(src, fake)
    assert again == 0


def test_changes_that_move_prs_in_and_out_of_the_week(fake: FakeGitHub, cache: Cache) -> None:
    pulls = build_week(REPO, count=30, overflow=None)
    fake.add_repo(REPO, pulls)
    src = cached_source(fake, cache)
    first, _ = fetch(src, fake)
    period = week_period(WEEK, TZ)
    opened = [p for p in first.pulls if p.state == "open"]
    closed = [p for p in first.pulls if p.state == "closed"]
    # an open PR merged the week after: it leaves the week
    after = (period.until + timedelta(days=2)).astimezone(UTC)
    fake.touch(REPO, opened[0].number, state="merged", merged_at=after, closed_at=after)
    # a closed PR reopened: it leaves the week (it was created before it)
    fake.touch(REPO, closed[0].number, state="open", closed_at=None)
    # a new PR merged in the week appears
    newcomer = build_week(REPO, count=1, overflow=None, decoys=0, seed=99, first_number=5000)[0]
    newcomer = msgspec.structs.replace(newcomer, state="merged",
                                       merged_at=newcomer.closed_at or first.pulls[0].merged_at,
                                       closed_at=newcomer.closed_at or first.pulls[0].merged_at,
                                       updated_at=datetime.now(UTC).replace(microsecond=0))
    fake.put_pull(REPO, newcomer)

    snapshot, requests = fetch(src, fake, now=later())
    numbers = {p.number for p in snapshot.pulls}
    assert opened[0].number not in numbers and closed[0].number not in numbers
    assert newcomer.number in numbers
    assert snapshot.pulls == now_on_github(fake).pulls
    assert requests == 2  # the search for what changed (with the rechecks), the PRs


def test_a_change_search_has_not_indexed_yet_is_fetched_by_number(fake: FakeGitHub,
                                                                   cache: Cache) -> None:
    fake.add_repo(REPO, build_week(REPO, count=30, overflow=None))
    src = cached_source(fake, cache)
    first, _ = fetch(src, fake)
    target = next(p for p in first.pulls if p.state == "open")
    fake.touch(REPO, target.number, title="renamed while search lags")
    fake.unindexed.add(target.number)
    snapshot, requests = fetch(src, fake, now=later())
    assert snapshot.pulls == now_on_github(fake).pulls
    assert requests == 2  # the change search (with its recheck), then the PR by number


def test_evicted_pr_entries_are_fetched_alone(fake: FakeGitHub, cache: Cache) -> None:
    fake.add_repo(REPO, build_week(REPO, count=30))
    src = cached_source(fake, cache)
    fetch(src, fake)
    victims = sorted(all_keys(cache.client, f"prdigest:v2:{{{REPO}}}:pr:*"))[5:7]
    cache.client.delete(*victims)
    snapshot, requests = fetch(src, fake)
    assert snapshot.pulls == now_on_github(fake).pulls
    assert (requests, src.last) == (1, "warm")
    assert len(all_keys(cache.client, f"prdigest:v2:{{{REPO}}}:pr:*")) == 30


def test_current_week_is_short_lived_and_past_weeks_long(fake: FakeGitHub,
                                                         cache: Cache) -> None:
    now = datetime.now(UTC)
    this_week = current_week(now, TZ)
    pulls = build_week(REPO, count=10, overflow=None, decoys=0, week=this_week)
    fake.add_repo(REPO, [*pulls, *build_week(REPO, count=10, overflow=None, decoys=0)])
    src = cached_source(fake, cache)
    fetch(src, fake, now=now, week=this_week)
    fetch(src, fake, now=now, week=WEEK)

    assert fetch(src, fake, now=now + timedelta(minutes=14), week=this_week)[1] == 0
    assert fetch(src, fake, now=now + timedelta(minutes=16), week=this_week)[1] == 1
    assert src.last == "changed"
    assert fetch(src, fake, now=now + timedelta(days=29), week=WEEK)[1] == 0
    assert fetch(src, fake, now=now + timedelta(days=31), week=WEEK)[1] == 1


def test_ttls_come_from_the_config(fake: FakeGitHub, cache: Cache) -> None:
    config = msgspec.structs.replace(CONFIG, cache=CacheConfig(past_week_ttl_seconds=60))
    fake.add_repo(REPO, build_week(REPO, count=5, overflow=None))
    src = cached_source(fake, cache, config=config)
    now = datetime.now(UTC)
    fetch(src, fake, now=now)
    assert fetch(src, fake, now=now + timedelta(seconds=59))[1] == 0
    assert fetch(src, fake, now=now + timedelta(seconds=61))[1] == 1
    ttl = cache.client.ttl(f"prdigest:v2:{{{REPO}}}:week:{WEEK}:{TZ}")
    assert 100 < ttl <= 120  # freshness + the past-week TTL, for stale copies


# --- GitHub failing -------------------------------------------------------------------------


def test_stale_copy_is_served_with_its_age_when_github_fails(fake: FakeGitHub,
                                                             cache: Cache) -> None:
    fake.add_repo(REPO, build_week(REPO, count=30))
    src = cached_source(fake, cache, retries=1)
    fresh = src.fetch_week(REPO, WEEK)
    assert not fresh.stale and fresh.age_seconds is None
    fake.fail_next(10, 502)
    when = datetime.now(UTC) + LATER
    data = at(src, when).fetch_week(REPO, WEEK)
    assert data.stale and src.last == "stale"
    assert data.age_seconds == pytest.approx(LATER.total_seconds(), abs=60)
    assert data.snapshot.pulls == fresh.snapshot.pulls
    assert data.snapshot.fetched_at == fresh.snapshot.fetched_at


def test_no_cached_copy_means_the_error_surfaces(fake: FakeGitHub, cache: Cache) -> None:
    fake.add_repo(REPO, [])
    src = cached_source(fake, cache, retries=0)
    fake.fail_next(1, 503)
    with pytest.raises(SourceError, match="keeps failing"):
        src.fetch_week(REPO, WEEK)


def test_stale_single_pull_when_github_fails(fake: FakeGitHub, cache: Cache) -> None:
    pulls = build_week(REPO, count=3)
    fake.add_repo(REPO, pulls)
    src = cached_source(fake, cache, retries=0)
    assert src.fetch_pull(REPO, 1001) == pulls[1]
    fake.clear()
    assert src.fetch_pull(REPO, 1001) == pulls[1] and fake.count() == 0
    fake.fail_next(1, 502)
    assert at(src, later()).fetch_pull(REPO, 1001) == pulls[1]
    assert fake.count() == 1


# --- PRs held in memory ----------------------------------------------------------------


class CountingCache(Cache):
    """Counts the Redis reads of single-PR lookups."""

    def __init__(self, client: redis.Redis) -> None:
        super().__init__(client)
        self.reads = 0

    def get_pointer(self, repo: str, number: int) -> Any:
        self.reads += 1
        return super().get_pointer(repo, number)

    def get_pulls(self, repo: str, refs: Any) -> Any:
        self.reads += 1
        return super().get_pulls(repo, refs)


@pytest.fixture
def counting_cache(redis_url: str) -> Iterator[CountingCache]:
    store = CountingCache(sync_client(redis_url))
    yield store
    store.close()


def held_lookups(lookups: list[bool]) -> Events:
    """Events whose looks into the memory of PRs are told to `lookups`."""
    events = Events()
    events.subscribe(lambda event: lookups.append(event.hit) if isinstance(event, CacheLookup)
                     and event.kind == "held-pull" else None)
    return events


def test_a_fresh_pr_is_served_from_memory(fake: FakeGitHub,
                                          counting_cache: CountingCache) -> None:
    pulls = build_week(REPO, count=3)
    fake.add_repo(REPO, pulls)
    lookups: list[bool] = []
    src = CachedSource(GitHubSource(CONFIG, token=TOKEN, base_url=fake.base_url,
                                    clock=VirtualClock(datetime.now(UTC))),
                       counting_cache, CONFIG, events=held_lookups(lookups))
    assert src.held_pull(REPO, 1001) is None
    assert src.fetch_pull(REPO, 1001) == pulls[1]
    reads, requests = counting_cache.reads, fake.count()
    assert src.held_pull(REPO, 1001) == pulls[1]
    assert src.fetch_pull(REPO, 1001) == pulls[1]
    assert (counting_cache.reads, fake.count()) == (reads, requests)
    assert lookups == [False, True]
    # other repositories and numbers are not mixed up with it
    assert src.held_pull("acme/other", 1001) is None and src.held_pull(REPO, 1002) is None


def test_a_held_pr_lasts_a_minute_then_redis_then_github(fake: FakeGitHub,
                                                         counting_cache: CountingCache) -> None:
    pulls = build_week(REPO, count=3)
    fake.add_repo(REPO, pulls)
    src = cached_source(fake, counting_cache)
    start = datetime.now(UTC)
    at(src, start).fetch_pull(REPO, 1001)
    fresh = CONFIG.cache.current_week_ttl_seconds
    assert at(src, start + timedelta(seconds=HELD_SECONDS - 1)).held_pull(REPO, 1001) == pulls[1]
    later_on = start + timedelta(seconds=HELD_SECONDS + 1)
    assert at(src, later_on).held_pull(REPO, 1001) is None
    # still fresh in Redis: read from there (and held again), GitHub not asked
    fake.clear()
    reads = counting_cache.reads
    assert at(src, later_on).fetch_pull(REPO, 1001) == pulls[1]
    assert fake.count() == 0 and counting_cache.reads > reads
    assert at(src, later_on).held_pull(REPO, 1001) == pulls[1]
    # past the current-week TTL GitHub is asked again, and its answer is held
    fake.touch(REPO, 1001, title="[ci] fix: renamed on GitHub")
    past = start + timedelta(seconds=fresh + 60)
    renamed = at(src, past).fetch_pull(REPO, 1001)
    assert renamed is not None and renamed.title == "[ci] fix: renamed on GitHub"
    assert fake.count() >= 1
    assert at(src, past).held_pull(REPO, 1001) == renamed


def test_a_forgotten_pr_is_fetched_again_here_and_by_other_replicas(
    fake: FakeGitHub, counting_cache: CountingCache, redis_url: str,
) -> None:
    pulls = build_week(REPO, count=3)
    fake.add_repo(REPO, pulls)
    here = cached_source(fake, counting_cache)
    other = cached_source(fake, Cache.from_url(redis_url))
    here.fetch_pull(REPO, 1001)
    assert other.fetch_pull(REPO, 1001) == pulls[1]  # from Redis
    fake.touch(REPO, 1001, state="merged", merged_at=datetime.now(UTC).replace(microsecond=0))
    fake.clear()
    here.forget_pull(REPO, 1001)
    assert here.held_pull(REPO, 1001) is None
    merged = here.fetch_pull(REPO, 1001)
    assert merged is not None and merged.state == "merged" and fake.count() >= 1
    # the other replica answers from its memory for up to a minute, then sees the merge
    assert other.fetch_pull(REPO, 1001) == pulls[1]
    soon = datetime.now(UTC) + timedelta(seconds=HELD_SECONDS + 1)
    seen = at(other, soon).fetch_pull(REPO, 1001)
    assert seen is not None and seen.state == "merged"


def test_memory_holds_a_bounded_number_of_prs(fake: FakeGitHub, cache: Cache) -> None:
    pulls = build_week(REPO, count=5)
    fake.add_repo(REPO, pulls)
    src = CachedSource(GitHubSource(CONFIG, token=TOKEN, base_url=fake.base_url,
                                    clock=VirtualClock(datetime.now(UTC))), cache, CONFIG,
                       held_pulls=2)
    for number in (1000, 1001, 1002):
        src.fetch_pull(REPO, number)
    src.fetch_pull(REPO, 1001)  # used again: kept over 1002
    src.fetch_pull(REPO, 1003)
    held = [n for n in (1000, 1001, 1002, 1003) if src.held_pull(REPO, n) is not None]
    assert held == [1001, 1003]


def test_nothing_is_held_without_redis(fake: FakeGitHub) -> None:
    fake.add_repo(REPO, build_week(REPO, count=3))
    src = cached_source(fake, None)
    src.fetch_pull(REPO, 1001)
    assert src.held_pull(REPO, 1001) is None


# --- without Redis ------------------------------------------------------------------------


def test_without_a_cache_the_output_is_the_same(fake: FakeGitHub, cache: Cache) -> None:
    fake.add_repo(REPO, build_week(REPO, count=30))
    with_cache = cached_source(fake, cache)
    without = cached_source(fake, None)
    cached, _ = fetch(with_cache, fake)
    plain, first = fetch(without, fake)
    again, second = fetch(without, fake)
    assert plain.pulls == cached.pulls == again.pulls
    assert first == second == 3 and without.last == "uncached"  # 2 search pages + 1


def test_redis_down_degrades_to_uncached(fake: FakeGitHub,
                                         caplog: pytest.LogCaptureFixture) -> None:
    fake.add_repo(REPO, build_week(REPO, count=5))
    dead = Cache(redis.Redis(port=free_port(), socket_connect_timeout=0.2,
                             retry=Retry(NoBackoff(), 0)))
    src = cached_source(fake, dead)
    with caplog.at_level(logging.WARNING, logger="bot.store.redis.cache"):
        snapshot, requests = fetch(src, fake)
        again, _ = fetch(src, fake)
    # numbers, PRs, follow-ups of the oversized lists
    assert snapshot.pulls == again.pulls == now_on_github(fake).pulls and requests == 3
    assert caplog.text.count("going on without it") == 1  # then left alone for a while


class FlakyRedis:
    """A Redis client whose next `failures` calls raise a connection error, as a
    failover's moment does; the calls after reach Redis."""

    def __init__(self, client: redis.Redis, failures: int) -> None:
        self.client = client
        self.failures = failures

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.failures > 0:
                self.failures -= 1
                raise redis.ConnectionError("Connection reset by peer")
            return attribute(*args, **kwargs)

        return call if callable(attribute) else attribute


def test_one_failed_call_leaves_the_cache_on(redis_url: str) -> None:
    flaky = FlakyRedis(sync_client(redis_url), failures=1)
    store = Cache(flaky)  # type: ignore[arg-type]
    store.put_report(REPO, WEEK, "en", b"first", 60)  # fails: a miss, not a cooldown
    store.put_report(REPO, WEEK, "en", b"second", 60)
    assert store.get_report(REPO, WEEK, "en") == b"second"


def test_failures_in_a_row_leave_redis_alone_for_the_cooldown(redis_url: str) -> None:
    flaky = FlakyRedis(sync_client(redis_url), failures=3)
    clock = VirtualClock()
    store = Cache(flaky, failures_before_cooldown=3, clock=clock)  # type: ignore[arg-type]
    for _ in range(3):
        assert store.get_report(REPO, WEEK, "en") is None
    store.put_report(REPO, WEEK, "en", b"kept?", 60)  # Redis answers again, but is not asked
    assert store.get_report(REPO, WEEK, "en") is None
    assert flaky.client.get(f"prdigest:v2:{{{REPO}}}:digest:report:{WEEK}:en") is None
    clock.advance(store.cooldown_seconds - 1)
    store.put_report(REPO, WEEK, "en", b"early", 60)  # still cooling down
    assert flaky.client.get(f"prdigest:v2:{{{REPO}}}:digest:report:{WEEK}:en") is None
    clock.advance(1)  # the cooldown is over: Redis is asked again
    store.put_report(REPO, WEEK, "en", b"back", 60)
    assert store.get_report(REPO, WEEK, "en") == b"back"


def test_cache_from_env(monkeypatch: pytest.MonkeyPatch, redis_url: str) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert cache_from_env(CONFIG) is None
    monkeypatch.setenv("REDIS_URL", redis_url)
    store = cache_from_env(CONFIG)
    assert store is not None and store.client.ping()
    store.close()


# --- digests and keys -----------------------------------------------------------------------


def test_reports_round_trip_with_ttl(cache: Cache) -> None:
    assert cache.get_report("acme/widgets", "2026-W29", "zh") is None
    cache.put_report("acme/widgets", "2026-W29", "zh", "摘要".encode(), 120)
    assert cache.get_report("acme/widgets", "2026-W29", "zh") == "摘要".encode()
    key = "prdigest:v2:{acme/widgets}:digest:report:2026-W29:zh"
    assert 0 < cache.client.ttl(key) <= 120


def test_keys_are_versioned(fake: FakeGitHub, cache: Cache) -> None:
    fake.add_repo(REPO, build_week(REPO, count=3, overflow=None, decoys=0))
    fetch(cached_source(fake, cache), fake)
    keys = {k.decode() if isinstance(k, bytes) else k for k in all_keys(cache.client, "*")}
    assert keys and all(k.startswith(f"prdigest:v2:{{{REPO}}}:") for k in keys)
    assert f"prdigest:v2:{{{REPO}}}:week:{WEEK}:{TZ}" in keys
    pull = now_on_github(fake).pulls[0]
    assert f"prdigest:v2:{{{REPO}}}:pr:{pull.number}:{int(pull.updated_at.timestamp())}" in keys  # type: ignore[union-attr]
    assert f"prdigest:v2:{{{REPO}}}:weeks" in keys  # the weeks index, no SCAN needed


def test_rest_fallback_is_cached_too(fake: FakeGitHub, cache: Cache) -> None:
    fake.add_repo(REPO, build_week(REPO, count=10, overflow=None))
    src = cached_source(fake, cache, token=None)
    snapshot, cold = fetch(src, fake)
    assert cold > 10 * 7
    assert fetch(src, fake) == (snapshot, 0)
    merged = next(p for p in snapshot.pulls if p.state == "merged")
    fake.touch(REPO, merged.number, title="edited")
    changed, requests = fetch(src, fake, now=later())
    assert changed.pulls == msgspec.structs.replace(
        now_on_github(fake), pulls=tuple(
            msgspec.structs.replace(p, review_threads=tuple(
                msgspec.structs.replace(t, resolved=None, outdated=None)
                for t in p.review_threads or ())) for p in now_on_github(fake).pulls)).pulls
    # two searches, 7 requests for the changed PR, one pull each for open/closed ones
    rechecked = sum(p.state != "merged" for p in snapshot.pulls)
    assert requests == 2 + 7 + rechecked
