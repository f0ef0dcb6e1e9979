"""The weekly schedule when a replica is killed mid-post: the slot in doubt is found on the
platform, re-sent under its key, or held, as the policy says."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.config import ChannelConfig, Config
from bot.models import Snapshot
from bot.store.coordination import Coordination
from bot.store.ledger import Slot
from testkit.clock import VirtualClock
from testkit.coordination import in_memory
from testkit.schedule import (
    DEAD_LOCK_SECONDS,
    REPO,
    SHANGHAI_MONDAY_9,
    CountingSource,
    FakePlatforms,
    FakePoster,
    KillSwitch,
    channel,
    killable,
    make_config,
    scheduler,
    tick_at,
)

# --- killed mid-post -----------------------------------------------------------------


async def kill_after_accept(
    config: Config, snapshot: Snapshot, port: Coordination, platforms: FakePlatforms,
    clock: VirtualClock,
) -> KillSwitch:
    """Replica r1 posts and dies before its ledger write (the hard case)."""
    switch = KillSwitch()
    switch.kill_in_post = "after-accept"
    doomed = scheduler(config, CountingSource(snapshot), killable(port, switch),
                       FakePoster(platforms, "r1", switch=switch), clock,
                       record_wait_seconds=0.0, lock_seconds=DEAD_LOCK_SECONDS)
    await doomed.tick()
    assert switch.dead and len(platforms.delivered) == 1
    return switch


@pytest.mark.parametrize("platform", ["slack", "telegram", "feishu"])
async def test_a_post_left_in_doubt_is_resent_once(
    snapshot: Snapshot, platform: str
) -> None:
    config = make_config([channel(platform, "X1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    slot = Slot("2026-W29", f"{platform}:X1", REPO)
    async with in_memory(clock) as port:
        await kill_after_accept(config, snapshot, port, platforms, clock)
        survivor = scheduler(config, CountingSource(snapshot), port,
                             FakePoster(platforms, "r2"), clock, replica="r2")
        clock.advance(timedelta(minutes=1))
        [busy] = await survivor.tick()  # the dead replica's lock has not expired yet
        assert busy.status == "busy"
        await clock.sleep(DEAD_LOCK_SECONDS)  # the dead replica's lock lapses
        [result] = await survivor.tick()
        assert result.status == "posted" and result.in_doubt
        await tick_at(survivor, clock.now() + timedelta(minutes=1))
        entry = await survivor.ledger.get(slot)
    assert entry is not None and entry.state == "posted" and entry.resent_in_doubt == 1
    if platform == "feishu":
        # Same uuid within the hour: Feishu drops the copy. Exactly once.
        assert len(platforms.delivered) == 1 and len(platforms.dropped) == 1
        assert entry.message_ids == (platforms.delivered[0].message_id,)
    else:
        # No idempotency key on Slack or Telegram: the documented duplicate.
        assert len(platforms.delivered) == 2


async def test_feishu_in_doubt_past_its_dedupe_window_follows_the_policy(
    snapshot: Snapshot
) -> None:
    config = make_config([channel("feishu", "oc_1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    async with in_memory(clock) as port:
        await kill_after_accept(config, snapshot, port, platforms, clock)
        clock.advance(timedelta(hours=2))
        holding = scheduler(config, CountingSource(snapshot), port,
                            FakePoster(platforms, "r2"), clock, replica="r2", in_doubt="hold")
        await clock.sleep(DEAD_LOCK_SECONDS)  # the dead replica's lock lapses
        [result] = await holding.tick()
    assert result.status == "held"
    assert len(platforms.delivered) == 1


async def test_hold_never_sends_twice_and_force_sends_again(
    snapshot: Snapshot
) -> None:
    config = make_config([channel("slack", "C1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    slot = Slot("2026-W29", "slack:C1", REPO)
    async with in_memory(clock) as port:
        await kill_after_accept(config, snapshot, port, platforms, clock)
        holding = scheduler(config, CountingSource(snapshot), port,
                            FakePoster(platforms, "r2"), clock, replica="r2", in_doubt="hold")
        await clock.sleep(DEAD_LOCK_SECONDS)  # the dead replica's lock lapses
        [held] = await holding.tick()
        assert held.status == "held" and "--force" in held.detail
        [still] = await tick_at(holding, clock.now() + timedelta(minutes=5))
        assert still.status == "held"
        assert len(platforms.delivered) == 1
        unforced = await holding.post(config.channels[0], "2026-W29")
        assert unforced.status == "held"
        forced = await holding.post(config.channels[0], "2026-W29", force=True)
        entry = await holding.ledger.get(slot)
    assert forced.status == "posted"
    assert entry is not None and entry.forced and entry.generation == 1
    assert entry.delivery_key == slot.delivery_key(1)
    assert len(platforms.delivered) == 2


async def test_a_graceful_stop_mid_post_finishes_and_records_it(
    snapshot: Snapshot
) -> None:
    config = make_config([channel("slack", "C1")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    in_post = asyncio.Event()
    answer = asyncio.Event()

    async def slow_platform(_: ChannelConfig) -> None:
        in_post.set()
        await answer.wait()

    slot = Slot("2026-W29", "slack:C1", REPO)
    async with in_memory(clock) as port:
        one = scheduler(config, CountingSource(snapshot), port,
                        FakePoster(platforms, "r1", before_accept=slow_platform), clock,
                        lock_seconds=5)
        ticking = asyncio.create_task(one.tick())
        await in_post.wait()
        ticking.cancel()
        await clock.sleep(0.05)
        assert not ticking.done()  # waiting for the post in flight
        answer.set()
        with pytest.raises(asyncio.CancelledError):
            await ticking
        entry = await one.ledger.get(slot)
        assert await port.locks.acquire(one.ledger.lock(slot, 1).key, "next", 1000)  # released
    assert entry is not None and entry.state == "posted"
    assert len(platforms.delivered) == 1
