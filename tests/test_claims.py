"""Two-step claims: work begun by a process that dies before finishing is taken over
once its alive mark expires; finished work, and work of a live process, is not. Work
another process holds is "elsewhere" (ask again later), never a repeat; the outcome of
work Redis could not be told of is told once it is back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.store.claims import Begun, Claims, Held
from bot.store.keys import Keys
from testkit.flaky_redis import FlakyRedis


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
    assert await two.try_begin("job", 60) is Held.DONE
    assert await one.try_begin("job", 60) is Held.DONE


async def test_work_of_a_live_owner_is_left_to_it(client: aioredis.Redis) -> None:
    one, two = Claims(client, alive_seconds=5), Claims(client, alive_seconds=5)
    assert await one.begin("job", 60)
    # Another process cannot tell a live owner from one that died a moment ago.
    assert await two.try_begin("job", 60) is Held.ELSEWHERE
    assert await two.first("slack", "job") == "answer"
    assert await one.first("slack", "job") == "later"
    assert await one.try_begin("job", 60) is Held.HERE  # a retry reaching the owner itself


async def test_work_of_a_dead_owner_is_taken_over_once(client: aioredis.Redis) -> None:
    dead = Claims(client, alive_seconds=0.2)
    assert await dead.first("slack", "Ev1")
    # `dead` is SIGKILLed here: nothing refreshes its mark any more.
    await asyncio.sleep(0.4)
    takers = [Claims(client, alive_seconds=5) for _ in range(5)]
    taken = await asyncio.gather(*(t.first("slack", "Ev1") for t in takers))
    # The others are told to ask again later: the winner might still fail.
    assert sorted(taken) == ["answer"] + ["later"] * 4
    winner = takers[taken.index("answer")]
    await winner.answered("slack", "Ev1")
    assert await Claims(client).first("slack", "Ev1") == "repeat"


async def test_an_unanswered_delivery_may_be_answered_by_a_retry(client: aioredis.Redis
                                                                 ) -> None:
    claims = Claims(client)
    assert await claims.first("telegram", "1:5") == "answer"
    await claims.unanswered("telegram", "1:5")
    assert await Claims(client).first("telegram", "1:5") == "answer"


async def test_the_alive_mark_is_kept_while_the_process_runs(client: aioredis.Redis) -> None:
    # Refreshed every third of its 2 s life, so a loaded machine stalling the loop for a
    # second still keeps it; the wait is past the first mark's life.
    owner = Claims(client, alive_seconds=2)
    stop = asyncio.Event()
    alive = asyncio.create_task(owner.keep_alive(stop))
    assert await owner.begin("long job", 60)
    await asyncio.sleep(2.5)  # past the mark's life: refreshed meanwhile
    assert await Claims(client).try_begin("long job", 60) is Held.ELSEWHERE
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


# --- outcomes Redis could not be told ------------------------------------------------


async def test_a_release_lost_to_an_outage_is_written_once_redis_is_back(
        client: aioredis.Redis) -> None:
    flaky = FlakyRedis(client)
    owner = Claims(flaky, alive_seconds=5)  # type: ignore[arg-type]
    other = Claims(client, alive_seconds=5)
    assert await owner.first("slack", "Ev7") == "answer"
    flaky.down = True
    await owner.unanswered("slack", "Ev7")  # the answer failed, and so does the release
    flaky.down = False
    # Until the owner reaches Redis again, another process is told to ask later...
    assert await other.first("slack", "Ev7") == "later"
    stop = asyncio.Event()
    alive = asyncio.create_task(owner.keep_alive(stop))  # ... its next call writes it
    await asyncio.sleep(0.2)
    stop.set()
    await alive
    assert await other.first("slack", "Ev7") == "answer"
    await other.answered("slack", "Ev7")
    assert await owner.first("slack", "Ev7") == "repeat"


async def test_a_retry_reaching_the_owner_after_the_outage_is_answered(
        client: aioredis.Redis) -> None:
    flaky = FlakyRedis(client)
    owner = Claims(flaky, alive_seconds=5)  # type: ignore[arg-type]
    assert await owner.first("telegram", "1:9") == "answer"
    flaky.down = True
    await owner.unanswered("telegram", "1:9")
    with pytest.raises(RedisError):  # not a repeat: "unknown" while Redis is away
        await owner.try_begin(Keys.seen("telegram", "1:9"), 60)
    flaky.down = False
    assert await owner.first("telegram", "1:9") == "answer"  # released first, then begun


async def test_finished_work_is_a_repeat_here_even_before_redis_is_told(
        client: aioredis.Redis) -> None:
    flaky = FlakyRedis(client)
    owner = Claims(flaky, alive_seconds=0.3)  # type: ignore[arg-type]
    assert isinstance(await owner.try_begin("notice:x#1:slack:C1", 60), Begun)
    flaky.down = True
    await owner.finish("notice:x#1:slack:C1", 60)  # posted; Redis cannot be told
    assert await owner.try_begin("notice:x#1:slack:C1", 60) is Held.DONE  # no Redis call
    flaky.down = False
    assert await owner.try_begin("notice:x#1:slack:C1", 60) is Held.DONE
    await asyncio.sleep(0.5)  # the owner's mark lapses: the claim says done by itself
    assert await Claims(client).try_begin("notice:x#1:slack:C1", 60) is Held.DONE


class PausedRedis:
    """The client, with the first claim's `SET NX` held until told (its caller has
    already found no work of its own in progress) and the `done` write held until
    told (an outcome on its way to Redis)."""

    def __init__(self, client: aioredis.Redis) -> None:
        self._client = client
        self.claim_held = asyncio.Event()
        self.send_claim = asyncio.Event()
        self.write_done = asyncio.Event()
        self._claims = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._client, name)

    async def set(self, name: str, value: bytes, **options: object) -> object:
        if options.get("nx"):
            self._claims += 1
            if self._claims == 1:
                self.claim_held.set()
                await self.send_claim.wait()
        if value == b"done":
            await self.write_done.wait()
        return await self._client.set(name, value, **options)  # type: ignore[arg-type]


async def test_a_retry_meeting_the_owner_s_finish_on_its_way_is_a_repeat(
        client: aioredis.Redis) -> None:
    """A retry arriving with its delivery, read while that delivery's answer is being
    recorded: a repeat, not "held by another process" (Slack's Socket Mode left such a
    retry unacknowledged)."""
    paused = PausedRedis(client)
    owner = Claims(paused, alive_seconds=5)  # type: ignore[arg-type]
    retry = asyncio.create_task(owner.first("slack", "event:Ev1"))
    await asyncio.wait_for(paused.claim_held.wait(), 5)  # nothing at work here yet
    assert await asyncio.wait_for(owner.first("slack", "event:Ev1"), 5) == "answer"
    finish = asyncio.create_task(owner.answered("slack", "event:Ev1"))
    await asyncio.sleep(0.05)  # answered; the outcome is on its way to Redis
    paused.send_claim.set()
    assert await asyncio.wait_for(retry, 5) == "repeat"
    paused.write_done.set()
    await asyncio.wait_for(finish, 5)
    assert await owner.first("slack", "event:Ev1") == "repeat"


async def test_a_late_release_leaves_a_claim_taken_over_meanwhile(
        client: aioredis.Redis) -> None:
    flaky = FlakyRedis(client)
    owner = Claims(flaky, alive_seconds=0.2)  # type: ignore[arg-type]
    assert await owner.begin("job", 60)
    flaky.down = True
    await owner.release("job")
    await asyncio.sleep(0.4)  # the outage outlives the owner's mark
    taker = Claims(client, alive_seconds=5)
    taken = await taker.try_begin("job", 60)
    assert isinstance(taken, Begun) and taken.in_doubt_since is not None
    flaky.down = False
    await owner.finish("other job", 60)  # the owner reaches Redis: the release is written
    assert await taker.try_begin("job", 60) is Held.HERE  # ... and left the taker's claim
    assert await Claims(client).try_begin("job", 60) is Held.ELSEWHERE
