"""Pacing shared through the coordination port: replicas together never post faster
than a lane's rate, a 429's hold seen by one replica keeps the others out, a replica
whose store is away paces on its own - on the in-memory store and a virtual clock (the
contract suite holds Redis to the same lanes); on Redis, the lanes' keys share one slot
and expire, and Sentinel-managed replicas share them too."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.pacing import LINE_KEEP_SECONDS, LINE_POLL_SECONDS, Lane, NoTurn, Rate, waiting_in_line
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


SLOW = Rate(1, "s")
SLOW_BOT = Lane("bot", SLOW)


async def test_sends_beyond_the_horizon_wait_in_line_and_go_in_the_order_they_came() -> None:
    """30 messages from three replicas at 1/s with a 5-s horizon: in line, every one
    goes, at the rate, without one refusal, in the order they asked."""
    clock = VirtualClock()
    platform = FakeRateLimit(per_second=SLOW.count, burst=1, clock=clock)
    went: list[int] = []

    async def send(pacer: SharedPacer, number: int) -> None:
        with waiting_in_line(600):
            await pacer.take_turn([SLOW_BOT, Lane(f"bot:{number}", SLOW)], max_wait=5)
        assert platform.take() is None, "the platform refused a paced message"
        went.append(number)

    three = replicas(clock)
    started = clock.monotonic()
    await asyncio.gather(*(send(three[number % 3], number) for number in range(30)))
    assert went == list(range(30))
    assert (platform.taken, platform.refused) == (30, 0)
    assert 29 <= clock.monotonic() - started <= 31


async def test_outside_the_line_a_turn_beyond_the_horizon_fails() -> None:
    """The measure above can fail: the same messages not waiting in line mostly fail."""
    clock = VirtualClock()
    three = replicas(clock)

    async def send(pacer: SharedPacer, number: int) -> bool:
        try:
            await pacer.take_turn([SLOW_BOT, Lane(f"bot:{number}", SLOW)], max_wait=5)
        except NoTurn:
            return False
        return True

    went = await asyncio.gather(*(send(three[n % 3], n) for n in range(30)))
    assert sum(went) <= 6


async def test_a_replica_dead_in_line_holds_the_others_up_no_longer_than_its_places_last(
        ) -> None:
    clock = VirtualClock()
    dead, alive, _ = replicas(clock)
    for number in range(20):  # took their places, then never asked again
        booking = await dead.book([SLOW_BOT, Lane(f"bot:dead{number}", SLOW)], within=5,
                                  ticket=f"dead{number}")
        assert booking.granted == (number < 6)
    started = clock.monotonic()
    with waiting_in_line(600):
        await alive.take_turn([SLOW_BOT, Lane("bot:alive", SLOW)], max_wait=5)
    # Behind 14 dead places its turn stays beyond the horizon until they lapse, which
    # it sees when it next asks.
    waited = clock.monotonic() - started
    assert LINE_KEEP_SECONDS <= waited <= LINE_KEEP_SECONDS + LINE_POLL_SECONDS


async def test_a_send_given_up_while_in_line_leaves_it() -> None:
    clock = VirtualClock()
    pacer, other, _ = replicas(clock)

    async def send(number: int) -> None:
        with waiting_in_line(600):
            await pacer.take_turn([SLOW_BOT, Lane(f"bot:{number}", SLOW)], max_wait=5)

    waiting = [asyncio.create_task(send(number)) for number in range(20)]
    await clock.sleep(0.5)
    assert (await other.book([SLOW_BOT], within=0)).ahead == 14
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    assert (await other.book([SLOW_BOT], within=0)).ahead == 0


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


@pytest.mark.redis
async def test_a_lines_keys_share_the_lanes_slot_and_expire_with_its_places(
        redis_url: str) -> None:
    port = RedisCoordination.from_url(redis_url)
    try:
        pacer = SharedPacer(port)
        lanes = [Lane("slack", SLOW), Lane("slack:C0123", SLOW)]
        assert (await pacer.book(lanes, within=0.5)).granted
        waiting = await pacer.book([lanes[0], Lane("slack:C0456", SLOW)], within=0.5,
                                   ticket="waiting")
        assert not waiting.granted and waiting.ahead == 0
        line = Keys().pace_line("slack")
        assert all("{slack}" in name for name in line)
        ttls = [await port.client.pttl(name) for name in line]
        assert all(LINE_KEEP_SECONDS * 1000 < ttl <= LINE_KEEP_SECONDS * 1000 + 1000
                   for ttl in ttls)
        await pacer.leave_line(lanes, "waiting")
        assert [await port.client.exists(name) for name in line] == [0, 0]
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
