"""Redis stopped (SIGKILL) and started again on its port while the service runs.

Meanwhile: /healthz says 503 with Redis not ok, every chat question is still answered
(uncached; subscription changes get a clear "try again"), and no weekly post goes out
without its ledger. After: the service recovers by itself, the subscriptions made
before are still there (append-only file, as docker-compose runs Redis), and every
weekly post arrives exactly once - also when Redis dies between a post and its ledger
write.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.delivery.schedule import Scheduler
from bot.store.coordination import StoreUnavailable
from testkit.reliability.harness import Service, service_in_process
from testkit.reliability.holding_proxy import HoldingProxy
from testkit.reliability.killable_redis import KillableRedis
from testkit.reliability.names import (
    FEISHU_CHAT,
    SLACK_ADMIN,
    SLACK_CHANNEL,
    SLACK_VAULT_CHANNEL,
    TELEGRAM_CHAT,
)
from testkit.reliability.posts import (
    count_posts,
    feishu_visible,
    slack_channel_texts,
    telegram_chat_texts,
)
from testkit.reliability.world import Urls, World
from testkit.schedule import tick_at

pytestmark = [pytest.mark.kills, pytest.mark.redis]  # processes (or Redis) killed and restarted

MONDAY = datetime(2026, 7, 20, 1, 5, tzinfo=UTC)
TRY_AGAIN = "could not be read or changed just now"


@contextlib.asynccontextmanager
async def running(world: World, server: KillableRedis, tmp_path: Path,
                  urls: Urls | None = None) -> AsyncIterator[Service]:
    async with service_in_process(world, server.url, tmp_path, urls=urls) as service:
        yield service


async def _healthy(service: Service, timeout: float = 30.0) -> float:
    """Seconds until /healthz says Redis is back."""
    started = time.monotonic()
    while True:
        answer = await service.get("/healthz")
        if answer.status_code == 200 and answer.json()["redis"]["ok"]:
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not healthy after {timeout} s: {answer.text}")
        await asyncio.sleep(0.1)


def _posts(world: World) -> dict[str, tuple[int, int, int]]:
    counts = {
        "slack": count_posts(slack_channel_texts(world.slack, SLACK_CHANNEL)),
        "vault": count_posts(slack_channel_texts(world.slack, SLACK_VAULT_CHANNEL)),
        "telegram": count_posts(telegram_chat_texts(world.telegram, TELEGRAM_CHAT)),
        "feishu": count_posts(feishu_visible(world.feishu, FEISHU_CHAT)),
    }
    return {name: (c.delivered, c.duplicated, c.lost) for name, c in counts.items()}


async def _tick_as_the_loop_does(scheduler: Scheduler, at: datetime) -> None:
    """One pass as `run_forever` makes it: a pass that fails (a pooled connection from
    before the restart) is logged and the next one, a moment later, goes on."""
    for _ in range(3):
        try:
            await tick_at(scheduler, at)
            return
        except StoreUnavailable:
            await asyncio.sleep(0.2)
    raise AssertionError("three passes in a row failed after Redis came back")


ONCE = {"slack": (1, 0, 0), "vault": (1, 0, 0), "telegram": (1, 0, 0), "feishu": (1, 0, 0)}


async def test_redis_stopped_and_restarted_mid_run(
    fakes: World, tmp_path: Path
) -> None:
    with KillableRedis() as server:
        async with running(fakes, server, tmp_path) as service:
            assert (await service.get("/healthz")).json()["status"] == "ok"
            assert await service.slack("subscribe rollout", user=SLACK_ADMIN)
            scheduler = service.services.process.scheduler
            assert scheduler is not None

            server.kill()
            health = await service.get("/healthz")
            assert health.status_code == 503
            assert health.json()["status"] == "unavailable"
            assert health.json()["redis"] == {"configured": True, "ok": False,
                                              "error": "ConnectionError"}
            assert "#1201" in json.dumps(await service.slack("risks for #1201"))
            assert "#1203" in json.dumps(await service.telegram("/summary 1203"))
            assert await service.feishu("digest last week")
            assert TRY_AGAIN in json.dumps(await service.slack("subscribe npu",
                                                               user=SLACK_ADMIN))
            with pytest.raises(Exception, match=r"(?i)connect"):
                await tick_at(scheduler, MONDAY)  # no ledger, so nothing is posted
            assert _posts(fakes)["telegram"] == (0, 0, 1)

            server.start()
            recovered = await _healthy(service)
            assert recovered < 5
            await _tick_as_the_loop_does(scheduler, MONDAY + timedelta(minutes=1))
            again = await tick_at(scheduler, MONDAY + timedelta(minutes=2))
            assert {r.status for r in again} == {"already-posted"}
            store = service.services.process.handler.subscriptions
            assert store is not None and store.topics(f"slack:{SLACK_CHANNEL}") == {"rollout"}
            assert await service.slack("subscribe npu", user=SLACK_ADMIN)
            assert store.topics(f"slack:{SLACK_CHANNEL}") == {"rollout", "npu"}
    assert _posts(fakes) == ONCE


async def test_redis_lost_between_a_post_and_its_ledger_write(
    fakes: World, tmp_path: Path
) -> None:
    """Slack has taken the digest, but Redis dies before the ledger says so: when Redis
    is back the confirmation is written, and the digest is not sent again."""
    with KillableRedis() as server, HoldingProxy(fakes.slack.base_url) as proxy:
        urls = fakes.urls()
        urls.slack = proxy.base_url
        async with running(fakes, server, tmp_path, urls) as service:
            scheduler = service.services.process.scheduler
            assert scheduler is not None
            # Slots and digest builds locked when Redis died stay locked until their
            # lock expires (60 s and 120 s in production, where the next pass is a
            # minute later anyway): 1 s here.
            scheduler.schedule = dataclasses.replace(scheduler.schedule, lock_seconds=1.0)
            hold = proxy.hold("chat.postMessage", when="after")
            first = asyncio.create_task(tick_at(scheduler, MONDAY))
            await asyncio.to_thread(hold.parked.wait, 20)
            server.kill()
            proxy.release()
            await asyncio.sleep(1.0)  # the post is answered; Redis is still away
            server.start()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(first, 60)
            await _healthy(service)
            for minute in (2, 5, 9):  # later passes, after any back-off
                await asyncio.sleep(1.2)
                await _tick_as_the_loop_does(scheduler, MONDAY + timedelta(minutes=minute))
    assert _posts(fakes) == ONCE
