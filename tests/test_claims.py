"""Two-step claims: work begun by a process that dies before finishing is taken over
once its alive mark expires; finished work, and work of a live process, is not. Work
another process holds is "elsewhere" (ask again later), never a repeat; the outcome of
work the store could not be told of is told once it is back. On the in-memory store
and a virtual clock; the contract suite holds Redis to the same steps."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from bot.store.claims import Begun, Claims, Held
from bot.store.coordination import Coordination, StoreUnavailable
from bot.store.keys import Keys
from bot.store.memory import MemoryCoordination
from testkit.clock import VirtualClock
from testkit.coordination import FlakyPort, memory_port


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def port(clock: VirtualClock) -> MemoryCoordination:
    """The store every process of a test shares."""
    return memory_port(clock)


async def test_finished_work_is_never_begun_again(port: Coordination,
                                                 clock: VirtualClock) -> None:
    one, two = (Claims(port, alive_seconds=0.2, clock=clock) for _ in range(2))
    assert await one.begin("job", 60)
    await one.finish("job", 60)
    await clock.sleep(0.4)  # one's alive mark is gone: finished work stays finished
    assert await two.try_begin("job", 60) is Held.DONE
    assert await one.try_begin("job", 60) is Held.DONE


async def test_work_of_a_live_owner_is_left_to_it(port: Coordination,
                                                 clock: VirtualClock) -> None:
    one, two = (Claims(port, alive_seconds=5, clock=clock) for _ in range(2))
    assert await one.begin("job", 60)
    # Another process cannot tell a live owner from one that died a moment ago.
    assert await two.try_begin("job", 60) is Held.ELSEWHERE
    assert await two.first("slack", "job") == "answer"
    assert await one.first("slack", "job") == "later"
    assert await one.try_begin("job", 60) is Held.HERE  # a retry reaching the owner itself


async def test_work_of_a_dead_owner_is_taken_over_once(port: Coordination,
                                                      clock: VirtualClock) -> None:
    dead = Claims(port, alive_seconds=0.2, clock=clock)
    assert await dead.first("slack", "Ev1")
    # `dead` is SIGKILLed here: nothing refreshes its mark any more.
    await clock.sleep(0.4)
    takers = [Claims(port, alive_seconds=5, clock=clock) for _ in range(5)]
    taken = await asyncio.gather(*(t.first("slack", "Ev1") for t in takers))
    # The others are told to ask again later: the winner might still fail.
    assert sorted(taken) == ["answer"] + ["later"] * 4
    winner = takers[taken.index("answer")]
    await winner.answered("slack", "Ev1")
    assert await Claims(port, clock=clock).first("slack", "Ev1") == "repeat"


async def test_an_unanswered_delivery_may_be_answered_by_a_retry(
        port: Coordination, clock: VirtualClock) -> None:
    claims = Claims(port, clock=clock)
    assert await claims.first("telegram", "1:5") == "answer"
    await claims.unanswered("telegram", "1:5")
    assert await Claims(port, clock=clock).first("telegram", "1:5") == "answer"


async def test_the_alive_mark_is_kept_while_the_process_runs(
        port: Coordination, clock: VirtualClock) -> None:
    # Refreshed every third of its 2 s life, so a loaded machine stalling the loop for a
    # second still keeps it; the wait is past the first mark's life.
    owner = Claims(port, alive_seconds=2, clock=clock)
    stop = asyncio.Event()
    alive = asyncio.create_task(owner.keep_alive(stop))
    assert await owner.begin("long job", 60)
    await clock.sleep(2.5)  # past the mark's life: refreshed meanwhile
    assert await Claims(port, clock=clock).try_begin("long job", 60) is Held.ELSEWHERE
    stop.set()
    await alive


async def test_a_claim_taken_over_says_since_when_its_work_may_have_been_done(
        port: Coordination, clock: VirtualClock) -> None:
    first, second, third = (Claims(port, alive_seconds=0.2, clock=clock) for _ in range(3))
    before = clock.now()
    fresh = await first.begin_work("post", 60)
    assert fresh is not None and fresh.in_doubt_since is None  # nobody did it before
    await clock.sleep(0.4)  # first dies before finishing
    taken = await second.begin_work("post", 60)
    assert taken is not None and taken.in_doubt_since is not None
    assert before - timedelta(seconds=1) <= taken.in_doubt_since <= before + timedelta(
        seconds=1)
    await clock.sleep(1.0)  # second dies too: the work still began when first began it
    again = await third.begin_work("post", 60)
    assert again is not None and again.in_doubt_since is not None
    # Told by what is left of the claim's expiry, not by when second began (a second or
    # more later).
    assert abs(again.in_doubt_since - taken.in_doubt_since) < timedelta(milliseconds=500)
    assert await first.begin_work("post", 60) is None  # third is alive


# --- outcomes the store could not be told ------------------------------------------------


async def test_a_release_lost_to_an_outage_is_written_once_redis_is_back(
        port: Coordination, clock: VirtualClock) -> None:
    flaky = FlakyPort(port)
    owner = Claims(flaky, alive_seconds=5, clock=clock)
    other = Claims(port, alive_seconds=5, clock=clock)
    assert await owner.first("slack", "Ev7") == "answer"
    flaky.down = True
    await owner.unanswered("slack", "Ev7")  # the answer failed, and so does the release
    flaky.down = False
    # Until the owner reaches the store again, another process is told to ask later...
    assert await other.first("slack", "Ev7") == "later"
    stop = asyncio.Event()
    alive = asyncio.create_task(owner.keep_alive(stop))  # ... its next call writes it
    await clock.sleep(0.2)
    stop.set()
    await alive
    assert await other.first("slack", "Ev7") == "answer"
    await other.answered("slack", "Ev7")
    assert await owner.first("slack", "Ev7") == "repeat"


async def test_a_retry_reaching_the_owner_after_the_outage_is_answered(
        port: Coordination, clock: VirtualClock) -> None:
    flaky = FlakyPort(port)
    owner = Claims(flaky, alive_seconds=5, clock=clock)
    assert await owner.first("telegram", "1:9") == "answer"
    flaky.down = True
    await owner.unanswered("telegram", "1:9")
    with pytest.raises(StoreUnavailable):  # not a repeat: "unknown" while the store is away
        await owner.try_begin(Keys.seen("telegram", "1:9"), 60)
    flaky.down = False
    assert await owner.first("telegram", "1:9") == "answer"  # released first, then begun


async def test_finished_work_is_a_repeat_here_even_before_redis_is_told(
        port: Coordination, clock: VirtualClock) -> None:
    flaky = FlakyPort(port)
    owner = Claims(flaky, alive_seconds=0.3, clock=clock)
    assert isinstance(await owner.try_begin("notice:x#1:slack:C1", 60), Begun)
    flaky.down = True
    await owner.finish("notice:x#1:slack:C1", 60)  # posted; the store cannot be told
    assert await owner.try_begin("notice:x#1:slack:C1", 60) is Held.DONE  # not asked
    flaky.down = False
    assert await owner.try_begin("notice:x#1:slack:C1", 60) is Held.DONE
    await clock.sleep(0.5)  # the owner's mark lapses: the claim says done by itself
    assert await Claims(port, clock=clock).try_begin("notice:x#1:slack:C1", 60) is Held.DONE


class PausedClaims:
    """The store's claims, with the first claim held until told (its caller has
    already found no work of its own in progress) and the `done` write held until
    told (an outcome on its way to the store)."""

    def __init__(self, claims: Any) -> None:
        self._claims = claims
        self.claim_held = asyncio.Event()
        self.send_claim = asyncio.Event()
        self.write_done = asyncio.Event()
        self._count = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._claims, name)

    async def claim(self, key: str, value: bytes, ttl_ms: int) -> bool:
        self._count += 1
        if self._count == 1:
            self.claim_held.set()
            await self.send_claim.wait()
        return bool(await self._claims.claim(key, value, ttl_ms))

    async def put(self, key: str, value: bytes, **options: Any) -> None:
        if value == b"done":
            await self.write_done.wait()
        await self._claims.put(key, value, **options)


class PausedPort:
    """`port`, its claims paused as `PausedClaims` says."""

    def __init__(self, port: Coordination) -> None:
        self._port = port
        self.claims = PausedClaims(port.claims)

    def __getattr__(self, name: str) -> object:
        return getattr(self._port, name)


async def test_a_retry_meeting_the_owner_s_finish_on_its_way_is_a_repeat(
        port: Coordination, clock: VirtualClock) -> None:
    """A retry arriving with its delivery, read while that delivery's answer is being
    recorded: a repeat, not "held by another process" (Slack's Socket Mode left such a
    retry unacknowledged)."""
    paused = PausedPort(port)
    owner = Claims(paused, alive_seconds=5, clock=clock)
    retry = asyncio.create_task(owner.first("slack", "event:Ev1"))
    await asyncio.wait_for(paused.claims.claim_held.wait(), 5)  # nothing at work here yet
    assert await asyncio.wait_for(owner.first("slack", "event:Ev1"), 5) == "answer"
    finish = asyncio.create_task(owner.answered("slack", "event:Ev1"))
    await clock.sleep(0.05)  # answered; the outcome is on its way to the store
    paused.claims.send_claim.set()
    assert await asyncio.wait_for(retry, 5) == "repeat"
    paused.claims.write_done.set()
    await asyncio.wait_for(finish, 5)
    assert await owner.first("slack", "event:Ev1") == "repeat"


async def test_a_late_release_leaves_a_claim_taken_over_meanwhile(
        port: Coordination, clock: VirtualClock) -> None:
    flaky = FlakyPort(port)
    owner = Claims(flaky, alive_seconds=0.2, clock=clock)
    assert await owner.begin("job", 60)
    flaky.down = True
    await owner.release("job")
    await clock.sleep(0.4)  # the outage outlives the owner's mark
    taker = Claims(port, alive_seconds=5, clock=clock)
    taken = await taker.try_begin("job", 60)
    assert isinstance(taken, Begun) and taken.in_doubt_since is not None
    flaky.down = False
    await owner.finish("other job", 60)  # the owner reaches the store: the release is written
    assert await taker.try_begin("job", 60) is Held.HERE  # ... and left the taker's claim
    assert await Claims(port, clock=clock).try_begin("job", 60) is Held.ELSEWHERE
