"""A large workspace's weekly posts wait their turn on the platform in line instead of
failing into the back-off: three replicas with 120 posts in flight on a platform that
takes one a second - turns up to two minutes away, twice the pacing horizon - post
every channel once, at the rate, with no failed attempt, their slot locks kept alive
through the wait; a post whose lock changed hands while it waited is not sent. On the
in-memory store and a virtual clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.config import ChannelConfig
from bot.delivery.schedule import Scheduler, ScheduleSettings
from bot.digests import Digests
from bot.pacing import MAX_TURN_WAIT, Lane, Rate
from bot.snapshot import read_snapshot
from bot.store.ledger import Ledger, Slot
from bot.store.pacing import SharedPacer
from testkit.clock import VirtualClock
from testkit.coordination import GuardedPort, StoreDown, memory_port
from testkit.schedule import (
    LIVE_LOCK_SECONDS,
    SHANGHAI_MONDAY_9,
    CountingSource,
    FakePlatforms,
    FakePoster,
    channel,
    make_config,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CHANNELS = 120
RATE = Rate(1, "s")
REPLICAS = 3
IN_FLIGHT = CHANNELS // REPLICAS  # posts in flight per replica: all of them at once


async def run(line_seconds: float) -> tuple[list[Scheduler], FakePlatforms, float]:
    """One pass of three replicas over the workspace; (the schedulers, what the
    platform got, the virtual seconds the pass took)."""
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    port = memory_port(clock)
    platforms = FakePlatforms(clock)
    config = make_config([channel("slack", f"C{n:04d}", lang="en") for n in range(CHANNELS)])
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    schedulers = []
    for number in range(REPLICAS):
        pacer = SharedPacer(port, clock=clock)

        async def turn(chat: ChannelConfig, pacer: SharedPacer = pacer) -> None:
            # What the adapter does before each message: its turn in the shared lanes.
            await pacer.take_turn([Lane("slack", RATE), Lane(f"slack:{chat.id}", RATE)],
                                  max_wait=MAX_TURN_WAIT)

        schedulers.append(Scheduler(
            Digests(config, CountingSource(snapshot)), port,
            FakePoster(platforms, f"r{number}", before_accept=turn),
            ScheduleSettings(replica=f"r{number}", lock_seconds=LIVE_LOCK_SECONDS,
                             concurrency=IN_FLIGHT, previous_week=False,
                             line_seconds=line_seconds), clock=clock))
    started = clock.monotonic()
    await asyncio.gather(*(scheduler.tick() for scheduler in schedulers))
    return schedulers, platforms, clock.monotonic() - started


async def test_posts_beyond_the_horizon_wait_their_turn_and_go_out_once() -> None:
    schedulers, platforms, took = await run(line_seconds=3600)
    counts = platforms.counts()
    assert len(counts) == CHANNELS and set(counts.values()) == {1}  # each once
    assert sum(s.stats.failed for s in schedulers) == 0
    assert sum(s.stats.posted for s in schedulers) == CHANNELS
    # At the platform's rate: the last of 120 one-a-second turns, well past the horizon.
    assert CHANNELS - 1 <= took <= CHANNELS + 5
    assert took > 2 * MAX_TURN_WAIT * 0.95


async def test_without_the_line_the_posts_beyond_the_horizon_fail() -> None:
    """What the line changes: the same pass not waiting in line fails the posts whose
    turn is beyond the horizon (they are retried after their back-off)."""
    schedulers, platforms, _ = await run(line_seconds=0)
    failed = sum(s.stats.failed for s in schedulers)
    assert failed >= CHANNELS - MAX_TURN_WAIT - 5
    assert len(platforms.counts()) == CHANNELS - failed


async def one_post_in_line(*, stolen: bool) -> tuple[FakePlatforms, str | None]:
    """One channel whose turn is 100 s away (the platform held its lanes off): its post
    waits in line, its slot's lock kept alive - or, with `stolen`, not renewed (this
    replica stalled) until it lapsed and another replica took it. (What the platform
    got, the ledger's state of the slot after.)"""
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    inner = memory_port(clock)
    config = make_config([channel("slack", "C0001", lang="en")])
    (only,) = config.channels
    slot = Slot("2026-W29", only.key, only.scope)
    lock_key = Ledger(inner).lock(slot, LIVE_LOCK_SECONDS).key
    renewals_fail = False
    in_line = asyncio.Event()

    def guard(step: str, args: tuple[object, ...]) -> None:
        if step == "renew" and renewals_fail:
            raise StoreDown()

    port = GuardedPort(inner, guard)
    pacer = SharedPacer(inner, clock=clock)
    lanes = [Lane("slack", RATE), Lane("slack:C0001", RATE)]

    async def turn(chat: ChannelConfig) -> None:
        nonlocal renewals_fail
        # Held off here, not before the pass: the virtual clock moves on while the pass
        # builds the digest in a thread.
        await pacer.hold_off(lanes, 100)
        renewals_fail = stolen  # from now on, until the thief is done
        in_line.set()
        await pacer.take_turn(lanes, max_wait=MAX_TURN_WAIT)

    async def thief() -> None:
        nonlocal renewals_fail
        await in_line.wait()
        await clock.sleep(20)  # the lock lapsed 5 s after its last renewal
        if stolen:
            assert await inner.locks.acquire(lock_key, "another-replica", 600_000)
        renewals_fail = False

    platforms = FakePlatforms(clock)
    scheduler = Scheduler(Digests(config, CountingSource(read_snapshot(
        EXAMPLES / "snapshot.json"))), port, FakePoster(platforms, "r0", before_accept=turn),
        ScheduleSettings(replica="r0", lock_seconds=LIVE_LOCK_SECONDS, previous_week=False),
        clock=clock)
    await asyncio.gather(scheduler.tick(), thief())
    _, entry = await Ledger(inner).read(slot)
    return platforms, None if entry is None else entry.state


async def test_a_post_whose_lock_changed_hands_while_in_line_is_not_sent() -> None:
    platforms, state = await one_post_in_line(stolen=True)
    assert platforms.delivered == []  # the other replica's to post now
    assert state == "sending"  # the lost lock fenced this replica's write off


async def test_a_post_whose_lock_is_kept_alive_goes_when_its_turn_comes() -> None:
    """The same wait, the lock renewed all along: the post goes, once."""
    platforms, state = await one_post_in_line(stolen=False)
    assert len(platforms.delivered) == 1 and state == "posted"


async def test_a_replica_stopping_while_its_post_waits_in_line_gives_the_place_up(
        ) -> None:
    """A graceful stop (the pass cancelled) while the post waits for a turn 100 s away:
    nothing was sent, so the post leaves the line and the ledger says nothing is in
    doubt; the replica that posts it next sends it as a first attempt, once."""
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    port = memory_port(clock)
    config = make_config([channel("telegram", "-1001", lang="en")])
    (only,) = config.channels
    slot = Slot("2026-W29", only.key, only.scope)
    platforms = FakePlatforms(clock)
    lanes = [Lane("telegram", RATE), Lane("telegram:-1001", RATE)]
    in_line = asyncio.Event()

    def replica(name: str) -> Scheduler:
        pacer = SharedPacer(port, clock=clock)

        async def turn(chat: ChannelConfig) -> None:
            if not in_line.is_set():  # the first post waits 100 s (held off here, not
                await pacer.hold_off(lanes, 100)  # before: the pass builds in a thread)
                in_line.set()
            await pacer.take_turn(lanes, max_wait=MAX_TURN_WAIT)

        return Scheduler(Digests(config, CountingSource(read_snapshot(
            EXAMPLES / "snapshot.json"))), port, FakePoster(platforms, name, before_accept=turn),
            ScheduleSettings(replica=name, lock_seconds=LIVE_LOCK_SECONDS, previous_week=False),
            clock=clock)

    stopping = asyncio.create_task(replica("r0").tick())
    await in_line.wait()
    await clock.sleep(10)
    stopping.cancel()
    await asyncio.gather(stopping, return_exceptions=True)
    _, entry = await Ledger(port).read(slot)
    assert entry is not None and not entry.may_have_arrived and entry.attempts == 0
    assert platforms.delivered == []
    assert (await SharedPacer(port, clock=clock).book(lanes, within=600)).ahead == 0
    clock.advance(LIVE_LOCK_SECONDS)  # the stopped replica's lock lapses
    other = replica("r1")
    [result] = await other.tick()
    assert result.status == "posted" and not result.in_doubt
    assert [d.replica for d in platforms.delivered] == ["r1"]
