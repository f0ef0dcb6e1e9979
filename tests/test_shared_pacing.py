"""Pacing shared through the coordination port: replicas together never post faster
than a lane's rate, a 429's hold seen by one replica keeps the others out, a replica
whose store is away paces on its own - on the in-memory store and a virtual clock (the
contract suite holds Redis to the same lanes); on Redis, the lanes' keys share one slot
and expire, and Sentinel-managed replicas share them too."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.pacing import Lane, NoTurn, Rate
from bot.store.keys import Keys
from bot.store.pacing import SharedPacer
from bot.store.redis.coordination import RedisCoordination
from testkit.clock import VirtualClock
from testkit.coordination import FlakyPort, memory_port
from testkit.fakes.rate_limit import FakeRateLimit

REDIS_TOPOLOGIES = ("single", "cluster")
RATE = Rate(10, "s")  # 100 ms a turn
BOT = Lane("bot", RATE)


def replicas(clock: VirtualClock, count: int = 3) -> list[SharedPacer]:
    """`count` replicas' pacers on one shared store."""
    shared = memory_port(clock)
    return [SharedPacer(shared, clock=clock) for _ in range(count)]


async def test_replicas_together_never_exceed_the_rate() -> None:
    """30 messages, 10 from each of three replicas, to different chats: they reach the
    platform (a bucket at the rate) without one refusal, and no faster than the rate
    allows."""
    clock = VirtualClock()
    platform = FakeRateLimit(per_second=RATE.count, burst=5, clock=clock)
    started = clock.monotonic()

    async def send(pacer: SharedPacer, chat: int) -> float:
        await pacer.take_turn([BOT, Lane(f"bot:{chat}", Rate(1, "s"))], max_wait=10)
        assert platform.take() is None, "the platform refused a paced message"
        return clock.monotonic()

    three = replicas(clock)
    granted = sorted(await asyncio.gather(*(
        send(pacer, n * 3 + index) for n in range(10) for index, pacer in enumerate(three))))
    assert (platform.taken, platform.refused) == (30, 0)
    assert granted[-1] - started >= 29 * RATE.interval * 0.95


async def test_unpaced_replicas_are_refused_by_the_same_platform() -> None:
    """The measure above can fail: 30 messages sent at once are mostly refused."""
    platform = FakeRateLimit(per_second=RATE.count, burst=5, clock=VirtualClock())
    refused = [platform.take() for _ in range(30)]
    assert sum(wait is not None for wait in refused) == 25


async def test_a_429_seen_by_one_replica_holds_the_others_off() -> None:
    clock = VirtualClock()
    told, other, third = replicas(clock)
    await told.hold_off([BOT, Lane("bot:c1", RATE)], 1.0)  # a 429 with Retry-After: 1
    with pytest.raises(NoTurn) as late:
        await third.take_turn([BOT, Lane("bot:c3", RATE)], max_wait=0.2)
    assert 0.5 < late.value.seconds <= 1.0
    started = clock.monotonic()
    await other.take_turn([BOT, Lane("bot:c2", RATE)], max_wait=5)
    assert clock.monotonic() - started >= 0.8


async def test_a_chat_waiting_for_its_turn_holds_no_other_chat_up() -> None:
    clock = VirtualClock()
    first, second, _ = replicas(clock)
    slow = Lane("bot:slow", Rate(1, "s"))
    await first.take_turn([BOT, slow], max_wait=5)
    started = clock.monotonic()

    async def timed(pacer: SharedPacer, lanes: list[Lane]) -> float:
        await pacer.take_turn(lanes, max_wait=5)
        return clock.monotonic() - started

    again, elsewhere = await asyncio.gather(timed(first, [BOT, slow]),
                                            timed(second, [BOT, Lane("bot:quick", RATE)]))
    assert again >= 0.8
    assert elsewhere < again


@pytest.mark.redis
async def test_a_sends_lanes_share_one_slot_and_expire(redis_url: str) -> None:
    port = RedisCoordination.from_url(redis_url)
    try:
        lanes = [Lane("slack", RATE), Lane("slack:C0123", Rate(1, "s"))]
        await SharedPacer(port).take_turn(lanes, max_wait=5)
        names = [Keys().pace("slack", lane.name) for lane in lanes]
        assert all("{slack}" in name for name in names)
        ttls = [await port.client.pttl(name) for name in names]
        assert all(0 < ttl <= 3000 for ttl in ttls)
        await asyncio.sleep(2.2)  # past the slower lane's turn and the key margin
        assert [await port.client.exists(name) for name in names] == [0, 0]
    finally:
        await port.close()


async def test_without_its_store_a_replica_paces_on_its_own(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = VirtualClock()
    away = FlakyPort(memory_port(clock))
    away.down = True
    platform = FakeRateLimit(per_second=RATE.count, burst=2, clock=clock)
    pacer = SharedPacer(away, clock=clock)
    started = clock.monotonic()
    with caplog.at_level(logging.WARNING, logger="bot.store.pacing"):
        for chat in range(5):
            await pacer.take_turn([BOT, Lane(f"bot:{chat}", RATE)], max_wait=5)
            assert platform.take() is None
        await pacer.hold_off([BOT], 0.3)
        held = clock.monotonic()
        await pacer.take_turn([BOT], max_wait=5)
    assert clock.monotonic() - held >= 0.25
    assert held - started >= 4 * RATE.interval * 0.95
    warnings = [r for r in caplog.records if "Redis is away" in r.getMessage()]
    assert len(warnings) == 1  # once, not once per message
    assert away.refused  # the store was asked, and refused


@pytest.mark.redis
async def test_through_sentinel_replicas_share_the_lanes_too(redis_sentinel_url: str) -> None:
    ports = [RedisCoordination.from_url(redis_sentinel_url) for _ in range(2)]
    try:
        told, other = (SharedPacer(port) for port in ports)
        await told.take_turn([BOT, Lane("bot:s1", RATE)], max_wait=5)
        await told.hold_off([BOT, Lane("bot:s1", RATE)], 1.0)
        started = asyncio.get_running_loop().time()
        await other.take_turn([BOT, Lane("bot:s2", RATE)], max_wait=5)
        assert asyncio.get_running_loop().time() - started >= 0.8
    finally:
        for port in ports:
            await port.close()
