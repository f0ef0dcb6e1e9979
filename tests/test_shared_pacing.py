"""Pacing shared through Redis (one server, a real Cluster, a Sentinel set): replicas
together never post faster than a lane's rate, a 429's hold seen by one replica keeps
the others out, the lanes' keys share one slot and expire, and a replica whose Redis
is away paces on its own."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from bot.pacing import Lane, NoTurn, Rate
from bot.store.client import async_client
from bot.store.keys import Keys
from bot.store.pacing import RedisPacer
from testkit.fakes.rate_limit import FakeRateLimit
from testkit.redis_topologies import private_sentinel

REDIS_TOPOLOGIES = ("single", "cluster")
RATE = Rate(10, "s")  # 100 ms a turn: far above timer noise, 30 turns in 3 s
BOT = Lane("bot", RATE)


@pytest_asyncio.fixture(loop_scope="function")
async def replicas(redis_url: str) -> AsyncIterator[list[RedisPacer]]:
    """Three replicas' pacers, each with its own connections to the shared Redis, open
    already (a Cluster client's first call discovers the cluster: up to a second late)."""
    clients = [async_client(redis_url) for _ in range(3)]
    await asyncio.gather(*(client.ping() for client in clients for _ in range(12)))
    yield [RedisPacer(client) for client in clients]
    for client in clients:
        await client.aclose()


async def test_replicas_together_never_exceed_the_rate(replicas: list[RedisPacer]) -> None:
    """30 messages, 10 from each of three replicas, to different chats: they reach the
    platform (a bucket at the rate, tolerating half a second of timer and network
    jitter) without one refusal, and no faster than the rate allows."""
    platform = FakeRateLimit(per_second=RATE.count, burst=5)
    started = time.monotonic()

    async def send(pacer: RedisPacer, chat: int) -> float:
        await pacer.take_turn([BOT, Lane(f"bot:{chat}", Rate(1, "s"))], max_wait=10)
        assert platform.take() is None, "the platform refused a paced message"
        return time.monotonic()

    granted = sorted(await asyncio.gather(*(
        send(pacer, n * 3 + index) for n in range(10) for index, pacer in enumerate(replicas))))
    assert (platform.taken, platform.refused) == (30, 0)
    assert granted[-1] - started >= 29 * RATE.interval * 0.95


async def test_unpaced_replicas_are_refused_by_the_same_platform() -> None:
    """The measure above can fail: 30 messages sent at once are mostly refused."""
    platform = FakeRateLimit(per_second=RATE.count, burst=5)
    refused = [platform.take() for _ in range(30)]
    assert sum(wait is not None for wait in refused) == 25


async def test_a_429_seen_by_one_replica_holds_the_others_off(
        replicas: list[RedisPacer]) -> None:
    told, other, third = replicas
    await told.hold_off([BOT, Lane("bot:c1", RATE)], 1.0)  # a 429 with Retry-After: 1
    with pytest.raises(NoTurn) as late:
        await third.take_turn([BOT, Lane("bot:c3", RATE)], max_wait=0.2)
    assert 0.5 < late.value.seconds <= 1.0
    started = time.monotonic()
    await other.take_turn([BOT, Lane("bot:c2", RATE)], max_wait=5)
    assert time.monotonic() - started >= 0.8


async def test_a_chat_waiting_for_its_turn_holds_no_other_chat_up(
        replicas: list[RedisPacer]) -> None:
    first, second, _ = replicas
    slow = Lane("bot:slow", Rate(1, "s"))
    await first.take_turn([BOT, slow], max_wait=5)
    started = time.monotonic()

    async def timed(pacer: RedisPacer, lanes: list[Lane]) -> float:
        await pacer.take_turn(lanes, max_wait=5)
        return time.monotonic() - started

    again, elsewhere = await asyncio.gather(timed(first, [BOT, slow]),
                                            timed(second, [BOT, Lane("bot:quick", RATE)]))
    assert again >= 0.8
    assert elsewhere < again


async def test_a_sends_lanes_share_one_slot_and_expire(redis_url: str) -> None:
    client = async_client(redis_url)
    try:
        lanes = [Lane("slack", RATE), Lane("slack:C0123", Rate(1, "s"))]
        await RedisPacer(client).take_turn(lanes, max_wait=5)
        names = [Keys().pace("slack", lane.name) for lane in lanes]
        assert all("{slack}" in name for name in names)
        ttls = [await client.pttl(name) for name in names]
        assert all(0 < ttl <= 3000 for ttl in ttls)
        await asyncio.sleep(2.2)  # past the slower lane's turn and the key margin
        assert [await client.exists(name) for name in names] == [0, 0]
    finally:
        await client.aclose()


async def test_without_redis_a_replica_paces_on_its_own(
        caplog: pytest.LogCaptureFixture) -> None:
    # Nothing listens on port 1; no retries, so each call fails at once.
    away = aioredis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2,
                          retry=Retry(NoBackoff(), 0))
    platform = FakeRateLimit(per_second=RATE.count, burst=2)
    pacer = RedisPacer(away)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="bot.store.pacing"):
        for chat in range(5):
            await pacer.take_turn([BOT, Lane(f"bot:{chat}", RATE)], max_wait=5)
            assert platform.take() is None
        await pacer.hold_off([BOT], 0.3)
        held = time.monotonic()
        await pacer.take_turn([BOT], max_wait=5)
    assert time.monotonic() - held >= 0.25
    assert held - started >= 4 * RATE.interval * 0.95
    warnings = [r for r in caplog.records if "Redis is away" in r.getMessage()]
    assert len(warnings) == 1  # once, not once per message
    await away.aclose()


async def test_through_sentinel_replicas_share_the_lanes_too() -> None:
    with private_sentinel() as sentinel:
        clients = [async_client(sentinel.url) for _ in range(2)]
        try:
            told, other = (RedisPacer(client) for client in clients)
            await told.take_turn([BOT, Lane("bot:c1", RATE)], max_wait=5)
            await told.hold_off([BOT, Lane("bot:c1", RATE)], 1.0)
            started = time.monotonic()
            await other.take_turn([BOT, Lane("bot:c2", RATE)], max_wait=5)
            assert time.monotonic() - started >= 0.8
        finally:
            for client in clients:
                await client.aclose()
