"""The weekly schedule and the chat adapters under the platforms' rate limits, through the
real adapters and SDKs against fakes that answer 429 beyond their rate: three replicas
post every channel once without one 429 or failed attempt, and a 429 one replica gets
holds the other replicas off that platform until its Retry-After has passed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from adapters.poster import AdapterPoster, DigestAdapter
from bot.clock import HeldClock
from bot.compose import outbound_adapter
from bot.config import Config
from bot.delivery.due import due_runs
from bot.delivery.schedule import Scheduler, ScheduleSettings
from bot.digests import Digests
from bot.models import Reply
from bot.source import SnapshotSource
from bot.store.pacing import SharedPacer
from bot.store.redis.coordination import RedisCoordination
from testkit.fakes.feishu import MESSAGES_PATH
from testkit.pacing import PLATFORMS, LimitedPlatforms, limited_platforms
from testkit.schedule import SHANGHAI_MONDAY_9, channel
from testkit.server_support import example_snapshot

pytestmark = [pytest.mark.slow, pytest.mark.redis]  # the fakes' limits are real seconds

RATE = 4  # posts a second per platform: the real limits scaled down
# The fakes take bursts of 6 (1.5 s of turns: this process's threads stall on a loaded
# machine, and a fake counts its own stall as a burst); each platform has twice that
# many channels, so posting them unpaced meets a 429 on every platform.
BURST = 6
CHANNELS_PER_PLATFORM = 12


def chat_id(platform: str, index: int) -> str:
    return {"slack": f"C{index:05d}", "telegram": str(-1001000000000 - index),
            "feishu": f"oc_pacing{index:03d}"}[platform]


@asynccontextmanager
async def replica_adapters(config: Config, port: RedisCoordination
                           ) -> AsyncIterator[dict[str, DigestAdapter]]:
    """One replica's adapters, posting in the lanes every replica shares in Redis."""
    digests = Digests(config, SnapshotSource(example_snapshot()))
    pacer = SharedPacer(port)
    adapters = {p: outbound_adapter(digests, p, pacer=pacer) for p in PLATFORMS}
    try:
        yield adapters
    finally:
        for adapter in adapters.values():
            await adapter.close()


async def test_three_replicas_post_every_channel_at_the_rate_without_a_429(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    channels = [channel(p, chat_id(p, n), lang="en")
                for n in range(CHANNELS_PER_PLATFORM) for p in PLATFORMS]
    clock = HeldClock(SHANGHAI_MONDAY_9)
    with limited_platforms(RATE, burst=BURST) as fakes:
        for name, value in fakes.env().items():
            monkeypatch.setenv(name, value)
        config = fakes.config(channels, rate=f"{RATE}/s")
        clients = [RedisCoordination.from_url(redis_url) for _ in range(3)]
        schedulers: list[Scheduler] = []
        try:
            async with (replica_adapters(config, clients[0]) as first,
                        replica_adapters(config, clients[1]) as second,
                        replica_adapters(config, clients[2]) as third):
                for number, (client, adapters) in enumerate(zip(
                        clients, (first, second, third), strict=True)):
                    digests = Digests(config, SnapshotSource(example_snapshot()))
                    schedulers.append(Scheduler(
                        digests, client, AdapterPoster(adapters),
                        ScheduleSettings(replica=f"r{number}", lock_seconds=5.0, concurrency=8,
                                         previous_week=False), clock=clock))
                await asyncio.wait_for(all_posted(schedulers, config, clock), timeout=90)
        finally:
            for client in clients:
                await client.close()
    delivered = fakes.delivered()
    assert fakes.refused() == dict.fromkeys(PLATFORMS, 0)  # not one 429
    assert sum(s.stats.failed for s in schedulers) == 0  # not one failed attempt
    for platform in PLATFORMS:
        chats = {chat_id(platform, n) for n in range(CHANNELS_PER_PLATFORM)}
        assert set(delivered[platform]) == chats


async def all_posted(schedulers: list[Scheduler], config: Config, clock: HeldClock) -> None:
    """Tick every replica together until the ledger holds every due channel posted."""
    slots = [run.slot for run in due_runs(config.channels, clock.now(), schedulers[0].catch_up)]
    while True:
        await asyncio.gather(*(s.tick() for s in schedulers))
        entries = await schedulers[0].ledger.get_many(slots)
        if all(e is not None and e.state == "posted" for e in entries):
            return
        await asyncio.sleep(0.1)


RETRY_AFTER = 2


def answer_429_once(fakes: LimitedPlatforms, platform: str) -> Callable[[], bool]:
    """Script the platform's next post to be answered 429 with a Retry-After; the
    function says whether that answer has been given."""
    if platform == "slack":
        fakes.slack.fail_next("chat.postMessage", status=429,
                              headers={"Retry-After": str(RETRY_AFTER)},
                              body={"ok": False, "error": "ratelimited"})
        return lambda: any(c.status == 429 for c in fakes.slack.calls("chat.postMessage"))
    if platform == "telegram":
        fakes.telegram.fail_next("sendMessage", 429,
                                 f"Too Many Requests: retry after {RETRY_AFTER}",
                                 retry_after=RETRY_AFTER)
        return lambda: any(c.status == 429 for c in fakes.telegram.calls("sendMessage"))
    fakes.feishu.fail_next(MESSAGES_PATH, status=429,
                           body={"code": 99991400, "msg": "request trigger frequency limit"},
                           headers={"x-ogw-ratelimit-reset": str(RETRY_AFTER)})
    return lambda: len(fakes.feishu.calls(MESSAGES_PATH)) >= 1


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_a_429_one_replica_gets_holds_the_other_replicas_off(
        platform: str, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with limited_platforms(1000, burst=1000) as fakes:  # no limit of its own: a script
        for name, value in fakes.env().items():
            monkeypatch.setenv(name, value)
        config = fakes.config([], rate="1000/s")
        answered = answer_429_once(fakes, platform)
        reply = Reply(kind="help", lang="en")
        clients = [RedisCoordination.from_url(redis_url) for _ in range(2)]
        try:
            async with (replica_adapters(config, clients[0]) as told,
                        replica_adapters(config, clients[1]) as other):
                refused = asyncio.create_task(
                    told[platform].send_reply(chat_id(platform, 1), reply))
                while not answered():
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.3)  # the replica has read the answer
                held_at = time.monotonic()
                await other[platform].send_reply(chat_id(platform, 2), reply)
                waited = time.monotonic() - held_at
                await refused  # and the refused one went once the hold was over
        finally:
            for client in clients:
                await client.close()
    assert waited >= RETRY_AFTER - 0.3 - 0.5
    delivered = fakes.delivered()[platform]
    assert sorted(set(delivered)) == [chat_id(platform, 1), chat_id(platform, 2)]
