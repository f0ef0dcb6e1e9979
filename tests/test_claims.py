"""Two-step claims: work begun by a process that dies before finishing is taken over
once its alive mark expires; finished work, and work of a live process, is not."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest_asyncio
import redis.asyncio as aioredis

from bot.store.claims import Claims


@pytest_asyncio.fixture(loop_scope="function")
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    connection = aioredis.Redis.from_url(redis_url)
    yield connection
    await connection.aclose()


async def test_finished_work_is_never_begun_again(client: aioredis.Redis) -> None:
    one, two = Claims(client, alive_seconds=0.2), Claims(client, alive_seconds=0.2)
    assert await one.begin("job", 60)
    await one.finish("job", 60)
    await asyncio.sleep(0.4)  # one's alive mark is gone: finished work stays finished
    assert not await two.begin("job", 60)
    assert not await one.begin("job", 60)


async def test_work_of_a_live_owner_is_left_to_it(client: aioredis.Redis) -> None:
    one, two = Claims(client, alive_seconds=5), Claims(client, alive_seconds=5)
    assert await one.begin("job", 60)
    assert not await two.begin("job", 60)
    assert not await one.begin("job", 60)  # a retry reaching the owner itself


async def test_work_of_a_dead_owner_is_taken_over_once(client: aioredis.Redis) -> None:
    dead = Claims(client, alive_seconds=0.2)
    assert await dead.first("slack", "Ev1")
    # `dead` is SIGKILLed here: nothing refreshes its mark any more.
    await asyncio.sleep(0.4)
    takers = [Claims(client, alive_seconds=5) for _ in range(5)]
    taken = await asyncio.gather(*(t.first("slack", "Ev1") for t in takers))
    assert sorted(taken) == [False] * 4 + [True]
    winner = takers[taken.index(True)]
    await winner.answered("slack", "Ev1")
    assert not await Claims(client).first("slack", "Ev1")


async def test_an_unanswered_delivery_may_be_answered_by_a_retry(client: aioredis.Redis
                                                                 ) -> None:
    claims = Claims(client)
    assert await claims.first("telegram", "1:5")
    await claims.unanswered("telegram", "1:5")
    assert await Claims(client).first("telegram", "1:5")


async def test_the_alive_mark_is_kept_while_the_process_runs(client: aioredis.Redis) -> None:
    # Refreshed every third of its 2 s life, so a loaded machine stalling the loop for a
    # second still keeps it; the wait is past the first mark's life.
    owner = Claims(client, alive_seconds=2)
    stop = asyncio.Event()
    alive = asyncio.create_task(owner.keep_alive(stop))
    assert await owner.begin("long job", 60)
    await asyncio.sleep(2.5)  # past the mark's life: refreshed meanwhile
    assert not await Claims(client).begin("long job", 60)
    stop.set()
    await alive


async def test_a_claim_taken_over_says_since_when_its_work_may_have_been_done(
        client: aioredis.Redis) -> None:
    first, second, third = (Claims(client, alive_seconds=0.2) for _ in range(3))
    before = datetime.now(UTC)
    fresh = await first.begin_work("post", 60)
    assert fresh is not None and fresh.in_doubt_since is None  # nobody did it before
    await asyncio.sleep(0.4)  # first dies before finishing
    taken = await second.begin_work("post", 60)
    assert taken is not None and taken.in_doubt_since is not None
    assert before - timedelta(seconds=1) <= taken.in_doubt_since <= before + timedelta(
        seconds=1)
    await asyncio.sleep(1.0)  # second dies too: the work still began when first began it
    again = await third.begin_work("post", 60)
    assert again is not None and again.in_doubt_since is not None
    # Told by what is left of the claim's expiry, not by when second began (a second or
    # more later); the margin is for a loaded machine's pauses between Redis and the clock.
    assert abs(again.in_doubt_since - taken.in_doubt_since) < timedelta(milliseconds=500)
    assert await first.begin_work("post", 60) is None  # third is alive
