"""One channel whose due posts cannot be computed stops no other channel: it is left
out of the pass, logged and counted, and the failure shows in the scheduler's status;
a pass that raises is counted too, and the loop goes on."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import msgspec

from bot.config import Config
from bot.delivery.due import DueFailure, due_runs
from bot.delivery.schedule import Scheduler, ScheduleSettings
from bot.digests import Digests
from bot.events import Events, ScheduleFailed
from bot.snapshot import read_snapshot
from testkit.clock import VirtualClock
from testkit.coordination import memory_port
from testkit.schedule import CountingSource, FakePlatforms, FakePoster, at, make_config

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MONDAY_9 = at("2026-07-20T01:00")  # 09:00 in Shanghai; 2026-W29 is owed
NEVER = "0 9 30 2 *"


def _config(bad_index: int = 1) -> Config:
    """Three channels; one has a cron that never fires, as if it got past the check
    at load (an older config, a croniter that reads it differently)."""
    config = make_config([
        {"platform": platform, "id": f"{platform}-1", "repo": "acme/lumen",
         "timezone": "Asia/Shanghai", "schedule": "0 9 * * MON"}
        for platform in ("slack", "telegram", "feishu")])
    channels = list(config.channels)
    channels[bad_index] = msgspec.structs.replace(channels[bad_index], schedule=NEVER)
    return msgspec.structs.replace(config, channels=tuple(channels))


def test_a_channel_whose_cron_cannot_be_walked_is_left_out_alone() -> None:
    failures: list[DueFailure] = []
    runs = due_runs(_config().channels, MONDAY_9, timedelta(hours=12), failures=failures)
    assert [(run.channel.key, run.week) for run in runs] == [
        ("feishu:feishu-1", "2026-W29"), ("slack:slack-1", "2026-W29")]
    assert [failure.channel.key for failure in failures] == ["telegram:telegram-1"]
    assert "failed to find" in failures[0].error



def failing_passes(failures: list[str]) -> Events:
    """Events whose failed passes (`ScheduleFailed`) are told to `failures`."""
    events = Events()
    events.subscribe(lambda event: failures.append(event.kind)
                     if isinstance(event, ScheduleFailed) else None)
    return events


async def test_a_pass_posts_every_other_channel_and_reports_the_one_left_out() -> None:
    clock = VirtualClock(MONDAY_9)
    platforms = FakePlatforms(clock)
    failures: list[str] = []
    port = memory_port(clock)
    try:
        scheduler = Scheduler(Digests(_config(),
                                      CountingSource(read_snapshot(EXAMPLES / "snapshot.json"))),
                              port, FakePoster(platforms, "r1"),
                              ScheduleSettings(replica="r1"), clock=clock,
                              events=failing_passes(failures))
        results = await scheduler.tick()
        assert sorted(r.channel for r in results if r.status == "posted") == [
            "feishu:feishu-1", "slack:slack-1"]
        status = scheduler.status()
        assert status["failed_passes"] == 1 and status["last_pass_ok"] is False
        assert "telegram:telegram-1" in str(status["last_error"])
        assert failures == ["channel"]
    finally:
        await port.close()


async def test_a_pass_that_raises_is_counted_and_the_loop_goes_on() -> None:
    clock = VirtualClock(MONDAY_9)
    failures: list[str] = []
    port = memory_port(clock)
    stop = asyncio.Event()
    passes = []
    try:
        scheduler = Scheduler(Digests(make_config([]),
                                      CountingSource( read_snapshot(EXAMPLES / "snapshot.json"))),
                              port, FakePoster(FakePlatforms(clock), "r1"),
                              ScheduleSettings(poll_seconds=0.01), clock=clock,
                              events=failing_passes(failures))

        async def tick() -> list[object]:
            passes.append(1)
            if len(passes) == 1:
                raise RuntimeError("the ledger is unreadable")
            stop.set()
            return []

        scheduler.tick = tick  # type: ignore[assignment, method-assign]
        await asyncio.wait_for(scheduler.run_forever(stop), timeout=10)
        assert len(passes) == 2
        assert scheduler.stats.failed_passes == 1
        assert scheduler.status()["last_error"] == "RuntimeError: the ledger is unreadable"
        assert failures == ["pass"]
    finally:
        await port.close()
