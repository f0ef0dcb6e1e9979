"""The weekly schedule: due runs per time zone, the ledger, catch-up, in-doubt posts."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

import msgspec
import pytest

from adapters.base import DeliveryError
from adapters.poster import AdapterPoster
from bot.config import ChannelConfig
from bot.models import Digest, Snapshot
from bot.store.cache import CachedSource
from bot.store.coordination import StoreUnavailable
from bot.store.ledger import Ledger, Slot, backoff
from bot.store.locks import Lock
from bot.store.redis.cache import Cache
from testkit.clock import VirtualClock
from testkit.coordination import FlakyPort, in_memory, memory_port
from testkit.schedule import (
    REPO,
    SHANGHAI_MONDAY_9,
    THREE_PLATFORMS,
    CountingSource,
    FakePlatforms,
    FakePoster,
    WeekOnly,
    at,
    channel,
    make_config,
    scheduler,
    statuses,
    tick_at,
)

STOP_LIMIT = 30.0
"""Seconds a stopped scheduler has to end: these tests check that it ends, not how fast
(a loaded machine is slow), so the limit only bounds a hang."""


# --- ledger and locks ----------------------------------------------------------------


async def test_a_lock_is_held_by_one_token_and_expires() -> None:
    clock = VirtualClock()
    async with in_memory(clock) as port:
        first = Lock(port.locks, "t:lock", ttl_seconds=2, clock=clock)
        second = Lock(port.locks, "t:lock", ttl_seconds=2, clock=clock)
        assert await first.acquire()
        assert not await second.acquire()
        await second.release()  # not its lock: nothing happens
        assert not await Lock(port.locks, "t:lock", ttl_seconds=2, clock=clock).acquire()
        await clock.sleep(2.1)  # it expires on its own, with nobody releasing it
        assert await second.acquire()
        assert not await first.renew() and first.lost
        await first.release()
        assert not await port.locks.acquire("t:lock", first.token, 2000)  # second's
        assert await port.locks.acquire("t:lock", second.token, 2000)


async def test_a_lock_kept_alive_outlives_its_ttl() -> None:
    clock = VirtualClock()
    async with in_memory(clock) as port:
        # Renewed every third of its 2 s; the wait is well past its TTL.
        lock = Lock(port.locks, "t:lock", ttl_seconds=2, clock=clock)
        assert await lock.acquire()
        async with lock.kept_alive():
            await clock.sleep(7.5)
            assert not await Lock(port.locks, "t:lock", ttl_seconds=1, clock=clock).acquire()
        assert not lock.lost
        await lock.release()
        assert await Lock(port.locks, "t:lock", ttl_seconds=1, clock=clock).acquire()


async def test_a_fenced_write_needs_the_lock_and_the_entry_it_read() -> None:
    from bot.store.ledger import LedgerEntry

    clock = VirtualClock()
    async with in_memory(clock) as port:
        ledger = Ledger(port, clock=clock)
        slot = Slot("2026-W29", "slack:C1", REPO)
        entry = LedgerEntry(state="sending", week=slot.week, channel=slot.channel,
                            repo=slot.repo, delivery_key=slot.delivery_key())
        stalled = ledger.lock(slot, 0.1)
        assert await stalled.acquire()
        await clock.sleep(0.2)  # the holder stalls past its lock's expiry
        taker = ledger.lock(slot, 5)
        assert await taker.acquire()
        written, _ = await ledger.write_fenced(slot, stalled, None, entry)
        assert not written and stalled.lost
        written, raw = await ledger.write_fenced(slot, taker, None, entry)
        assert written
        # A write based on an outdated read is refused too ...
        failed = msgspec.structs.replace(entry, state="failed", error="timed out")
        written, _ = await ledger.write_fenced(slot, taker, None, failed)
        assert not written
        assert await ledger.get(slot) == entry
        # ... but not the same write sent again (its first answer lost): it is there.
        written, _ = await ledger.write_fenced(slot, taker, None, entry)
        assert written
        written, _ = await ledger.write_fenced(slot, taker, raw, failed)
        assert written and await ledger.get(slot) == failed


def test_delivery_keys_are_stable_short_and_new_per_generation() -> None:
    slot = Slot("2026-W29", "feishu:oc_1", REPO)
    assert slot.delivery_key() == slot.delivery_key(0)
    assert slot.delivery_key(1) != slot.delivery_key(0)
    assert slot.delivery_key() != Slot("2026-W30", "feishu:oc_1", REPO).delivery_key()
    assert len(slot.delivery_key(0) + "-99") <= 50  # Feishu's uuid limit, with a part suffix


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [backoff(n).total_seconds() / 60 for n in (1, 2, 3, 6, 40)] == [1, 2, 4, 30, 30]


# --- ticks ---------------------------------------------------------------------------


async def test_a_due_week_is_posted_once_to_every_channel(
    snapshot: Snapshot
) -> None:
    config = make_config(THREE_PLATFORMS)
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    source = CountingSource(snapshot)
    async with in_memory(clock) as port:
        one = scheduler(config, source, port, FakePoster(platforms, "r1"), clock)
        results = await one.tick()
        assert statuses(results) == {"posted": 3}
        again = await tick_at(one, SHANGHAI_MONDAY_9 + timedelta(minutes=5))
        assert statuses(again) == {"already-posted": 3}
        entries = await one.ledger.entries()
    assert platforms.counts() == {("2026-W29", key, REPO): 1
                                  for key in ("slack:C1", "telegram:-100", "feishu:oc_1")}
    assert {(d.channel, d.lang) for d in platforms.delivered} == {
        ("slack:C1", "zh"), ("telegram:-100", "en"), ("feishu:oc_1", "zh")}
    assert all(e.state == "posted" and e.message_ids and e.replica == "r1" for e in entries)
    # slack and feishu share (zh, npu first): two digests, one read of the week and
    # one of the week before (for the trends).
    assert one.stats.digest_builds == 2
    assert source.reads == {(REPO, "2026-W29"): 1, (REPO, "2026-W28"): 1}


@pytest.mark.redis  # the cache the replicas share is Redis's
async def test_three_replicas_in_the_same_minute_post_each_channel_once(
    redis_url: str, snapshot: Snapshot
) -> None:
    channels = [channel(p, f"{p}-{n}", lang=("zh", "en")[n % 2], topics=(("npu",), ())[n % 2],
                        repo=("acme/lumen", "acme/other")[n % 2])
                for n in range(8) for p in ("slack", "telegram", "feishu")]
    config = make_config(channels, repos=("acme/lumen", "acme/other"))
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    github = CountingSource(snapshot)
    async with in_memory(clock) as port:
        cache = Cache.from_url(redis_url)
        try:
            source = CachedSource(WeekOnly(github), cache, config)
            replicas = [scheduler(config, source, port, FakePoster(platforms, f"r{n}",
                                                                      latency=0.01),
                                  clock, replica=f"r{n}") for n in range(3)]
            results = await asyncio.gather(*(r.tick() for r in replicas))
        finally:
            cache.close()
    posted = [r for batch in results for r in batch if r.status == "posted"]
    assert len(posted) == len(channels)
    assert set(platforms.counts().values()) == {1} and len(platforms.counts()) == len(channels)
    # Two variants (one per repository) built once in all, each week fetched once.
    assert sum(r.stats.digest_builds for r in replicas) == 2
    assert github.reads == {(repo, week): 1 for repo in ("acme/lumen", "acme/other")
                            for week in ("2026-W29", "2026-W28")}


@pytest.mark.parametrize("hours_down, posted", [(11.5, 1), (12.5, 0)])
async def test_a_restart_catches_up_within_the_window_only(
    snapshot: Snapshot, hours_down: float, posted: int
) -> None:
    config = make_config([channel("slack", "C1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9 + timedelta(hours=hours_down))
    platforms = FakePlatforms(clock)
    async with in_memory(clock) as port:
        started = scheduler(config, CountingSource(snapshot), port,
                            FakePoster(platforms, "r1"), clock)
        await started.tick()
        await tick_at(started, clock.now() + timedelta(minutes=1))
        # A second replica starting a little later changes nothing.
        late = scheduler(config, CountingSource(snapshot), port, FakePoster(platforms, "r2"),
                         clock, replica="r2")
        await tick_at(late, clock.now() + timedelta(minutes=2))
        assert len(await started.ledger.entries()) == posted
    assert len(platforms.delivered) == posted


async def test_a_failed_post_backs_off_and_is_retried_with_the_same_key(
    snapshot: Snapshot
) -> None:
    config = make_config([channel("slack", "C1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    failures = iter(["channel_not_found"])
    poster = FakePoster(platforms, "r1", fail=lambda _: next(failures, None))
    async with in_memory(clock) as port:
        one = scheduler(config, CountingSource(snapshot), port, poster, clock)
        [failed] = await one.tick()
        assert failed.status == "failed" and "channel_not_found" in failed.detail
        entry = await one.ledger.get(Slot("2026-W29", "slack:C1", REPO))
        assert entry is not None and entry.state == "failed"
        assert entry.retry_at == SHANGHAI_MONDAY_9 + timedelta(minutes=1)
        [waiting] = await tick_at(one, SHANGHAI_MONDAY_9 + timedelta(seconds=30))
        assert waiting.status == "waiting" and poster.calls == 1
        [posted] = await tick_at(one, SHANGHAI_MONDAY_9 + timedelta(minutes=1))
        assert posted.status == "posted"
        final = await one.ledger.get(Slot("2026-W29", "slack:C1", REPO))
    assert final is not None and final.attempts == 2 and final.delivery_key == entry.delivery_key
    assert len(platforms.delivered) == 1


async def test_a_missing_week_is_retried_without_posting() -> None:
    from bot.errors import SourceError

    class Down(CountingSource):
        def fetch_week(self, repo: str, week: str) -> Any:
            raise SourceError("GitHub answered 502")

    config = make_config([channel("slack", "C1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    async with in_memory(clock) as port:
        one = scheduler(config, Down(Snapshot(repository=REPO)), port,
                        FakePoster(platforms, "r1"), clock)
        [result] = await one.tick()
        entry = await one.ledger.get(Slot("2026-W29", "slack:C1", REPO))
    assert result.status == "failed" and "502" in result.detail
    assert entry is not None and entry.state == "failed" and entry.attempts == 0
    assert platforms.delivered == []


# --- on demand, subscriptions, the loop ---------------------------------------------


async def test_post_on_demand_goes_through_the_ledger(snapshot: Snapshot) -> None:
    config = make_config([channel("telegram", "-100", lang="en")])
    clock = VirtualClock(at("2026-08-05T12:00"))
    platforms = FakePlatforms(clock)
    async with in_memory(clock) as port:
        one = scheduler(config, CountingSource(snapshot), port, FakePoster(platforms, "cli"),
                        clock)
        target = config.channels[0]
        first = await one.post(target, "2026-W29")
        second = await one.post(target, "2026-W29")
        forced = await one.post(target, "2026-W29", force=True)
    assert [first.status, second.status, forced.status] == [
        "posted", "already-posted", "posted"]
    assert second.message_ids == first.message_ids
    assert [d.delivery_key for d in platforms.delivered] == [
        Slot("2026-W29", "telegram:-100", REPO).delivery_key(g) for g in (0, 1)]


async def test_subscribed_topics_join_the_focus_and_share_builds(
    snapshot: Snapshot
) -> None:
    class Store:
        def topics(self, channel_key: str) -> set[str]:
            return {"ckpt"} if channel_key != "slack:C3" else set()

    config = make_config([channel("slack", "C1", topics=("npu",)),
                          channel("slack", "C2", topics=("npu",)),
                          channel("slack", "C3", topics=("npu",))])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    async with in_memory(clock) as port:
        one = scheduler(config, CountingSource(snapshot), port, FakePoster(platforms, "r1"),
                        clock, subscriptions=Store())
        await one.tick()
        names = [f"prdigest:v2:{{{REPO}}}:digest:weekly:2026-W29:zh:{topics}"
                 for topics in ("npu", "npu,ckpt", "ckpt,npu", "")]
        kept = [name for name in names if await port.values.get(name) is not None]
    assert one.stats.digest_builds == 2
    assert kept == names[:2]


async def test_run_forever_catches_up_at_start_and_stops_on_the_event(
    snapshot: Snapshot
) -> None:
    config = make_config(THREE_PLATFORMS)
    clock = VirtualClock(SHANGHAI_MONDAY_9 + timedelta(hours=3))
    platforms = FakePlatforms(clock)
    stop = asyncio.Event()
    async with in_memory(clock) as port:
        one = scheduler(config, CountingSource(snapshot), port, FakePoster(platforms, "r1"),
                        clock, poll_seconds=0.05)
        running = asyncio.create_task(one.run_forever(stop))
        while one.stats.ticks < 3:
            await clock.sleep(0.02)
        stop.set()
        await asyncio.wait_for(running, STOP_LIMIT)
    assert len(platforms.delivered) == 3
    assert one.status()["posted"] == 3


async def test_stopping_finishes_the_post_in_flight_and_starts_no_other(
    snapshot: Snapshot
) -> None:
    config = make_config(THREE_PLATFORMS)
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    in_post = asyncio.Event()
    answer = asyncio.Event()

    async def slow_platform(_: ChannelConfig) -> None:
        in_post.set()
        await answer.wait()

    stop = asyncio.Event()
    async with in_memory(clock) as port:
        one = scheduler(config, CountingSource(snapshot), port,
                        FakePoster(platforms, "r1", before_accept=slow_platform), clock,
                        concurrency=1, lock_seconds=5)
        running = asyncio.create_task(one.run_forever(stop))
        await in_post.wait()
        stop.set()
        answer.set()
        await asyncio.wait_for(running, STOP_LIMIT)
        entries = await one.ledger.entries()
    assert len(platforms.delivered) == 1
    assert [e.state for e in entries] == ["posted"]


async def test_run_forever_survives_redis_going_away(snapshot: Snapshot) -> None:
    config = make_config([channel("slack", "C1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    away = FlakyPort(memory_port(clock))
    away.down = True
    one = scheduler(config, CountingSource(snapshot), away, FakePoster(platforms, "r1"),
                    clock, poll_seconds=0.05)
    with pytest.raises(StoreUnavailable):
        await one.tick()
    stop = asyncio.Event()
    running = asyncio.create_task(one.run_forever(stop))
    await clock.sleep(0.2)
    stop.set()
    await asyncio.wait_for(running, STOP_LIMIT)
    assert platforms.delivered == [] and one.stats.failed_passes >= 3


async def test_while_redis_is_down_each_failed_pass_is_one_line_without_a_traceback(
        snapshot: Snapshot, caplog: pytest.LogCaptureFixture) -> None:
    config = make_config([channel("slack", "C1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    away = FlakyPort(memory_port(clock))
    away.down = True
    one = scheduler(config, CountingSource(snapshot), away,
                    FakePoster(FakePlatforms(clock), "r1"), clock, poll_seconds=0.01)
    stop = asyncio.Event()
    with caplog.at_level(logging.INFO, logger="bot.delivery.schedule"):
        running = asyncio.create_task(one.run_forever(stop))
        while one.stats.failed_passes < 3:
            await clock.sleep(0.02)
        stop.set()
        await asyncio.wait_for(running, 5)
    failed = [r for r in caplog.records if "pass failed" in r.getMessage()]
    assert len(failed) == one.stats.failed_passes
    assert all(r.exc_info is None and r.levelno == logging.WARNING for r in failed)
    assert all("Redis unavailable" in r.getMessage() for r in failed)
    assert "Traceback" not in caplog.text


# --- the production poster -----------------------------------------------------------


class _Adapter:
    """A platform that keeps no idempotency key and cannot tell what arrived."""

    dedupe_window: timedelta | None = None

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        self.calls.append((channel_id, digest.week))
        return ["ts-1"]

    async def complete_delivery(self, channel_id: str, digest: Digest, *,
                                idempotency_key: str, since: datetime) -> list[str] | None:
        return None


class _KeyedAdapter(_Adapter):
    """A platform that drops a re-send with the same key for an hour (Feishu)."""

    dedupe_window = timedelta(hours=1)

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        self.calls.append((channel_id, idempotency_key or ""))
        return ["om_1"]


@pytest.fixture
def digest(snapshot: Snapshot) -> Digest:
    from bot.engine import build_digest

    config = make_config([])
    return build_digest(snapshot, "2026-W29", repo_config=config.repo(REPO), lang="zh")


async def test_adapter_poster_dispatches_by_platform_with_the_key_where_taken(
    digest: Digest,
) -> None:
    slack, feishu = _Adapter(), _KeyedAdapter()
    poster = AdapterPoster({"slack": slack, "feishu": feishu})
    config = make_config([channel("slack", "C1"), channel("feishu", "oc_1"),
                          channel("telegram", "-1")])
    slack_channel, feishu_channel, telegram_channel = config.channels
    assert await poster.post_digest(slack_channel, digest, delivery_key="pd-a") == ["ts-1"]
    assert await poster.post_digest(feishu_channel, digest, delivery_key="pd-b") == ["om_1"]
    assert slack.calls == [("C1", "2026-W29")] and feishu.calls == [("oc_1", "pd-b")]
    assert poster.idempotency_window(slack_channel) is None
    assert poster.idempotency_window(feishu_channel) == timedelta(hours=1)
    with pytest.raises(DeliveryError, match="telegram is not configured"):
        await poster.post_digest(telegram_channel, digest, delivery_key="pd-c")
