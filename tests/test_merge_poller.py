"""Merged-PR notices from the poller, for a bot without the GitHub webhook: conditional
requests, one poll per interval across replicas, nothing sent twice."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

import msgspec
import pytest
from github import Github

from bot.clock import HeldClock
from bot.delivery.notices import MergeNotifier
from bot.delivery.poller import MergePoller
from bot.digests import Digests
from bot.github.closed import PullLister
from bot.models import PullRequest
from bot.source import SnapshotSource
from bot.store.claims import Claims
from bot.store.coordination import Coordination
from bot.web.app import create_app
from testkit.clock import VirtualClock
from testkit.coordination import memory_port
from testkit.server_support import (
    FEISHU,
    NOW,
    SLACK,
    TELEGRAM,
    ConditionalGitHub,
    clear_env,
    example_config,
    example_snapshot,
    notices,
    recording_adapters,
    services_of,
    serving,
    snapshot_pull,
)

REDIS_TOPOLOGIES = ("single", "cluster")
"""Each Redis test here runs on one server and on a real Redis Cluster."""


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


# --- the poller ---------------------------------------------------------------------------



@pytest.fixture
def github() -> Any:
    with ConditionalGitHub() as fake:
        yield fake


def merged_later(number: int, clock: HeldClock, minutes: int) -> PullRequest:
    """A snapshot PR merged `minutes` after the clock's time."""
    moment = clock.now() + timedelta(minutes=minutes)
    return msgspec.structs.replace(snapshot_pull(number), merged_at=moment, closed_at=moment,
                                   updated_at=moment)


def poller_for(github: ConditionalGitHub, port: Coordination, adapters: dict[str, Any],
               clock: VirtualClock) -> tuple[MergePoller, Coordination, Github]:
    """A replica's poller; the replicas of a test share `port`."""
    config = example_config()
    claims = Claims(port, clock=clock)
    from adapters.poster import AdapterNotices

    notifier = MergeNotifier(Digests(config, SnapshotSource(example_snapshot())), claims,
                             AdapterNotices(adapters), clock=clock)
    hub = Github(base_url=github.base_url, retry=None, seconds_between_requests=None,
                 seconds_between_writes=None)
    lister = PullLister(hub.requester)
    return MergePoller(config, lister, claims, notifier, interval_seconds=0.01, clock=clock), \
        port, hub


async def test_the_poller_announces_new_merges_and_asks_conditionally(
    github: ConditionalGitHub
) -> None:
    clock = VirtualClock(NOW)
    port = memory_port(clock)
    adapters = recording_adapters()
    github.put(snapshot_pull(1202))  # merged before the poller started: history, not news
    poller, client, hub = poller_for(github, port, adapters, clock)
    first = await poller.poll_once()
    assert first.notified == []
    github.put(merged_later(1212, clock, 1))
    clock.advance(timedelta(minutes=5))
    await clock.sleep(0.02)  # the per-interval lock
    second = await poller.poll_once()
    clock.advance(timedelta(minutes=5))
    await clock.sleep(0.02)
    third = await poller.poll_once()  # nothing changed: 304
    await client.close()
    hub.close()
    assert sorted(second.notified) == sorted([SLACK, TELEGRAM, FEISHU])
    assert third.notified == []
    statuses = [(r.headers.get("if-none-match") is not None, r.status) for r in github.requests]
    assert statuses == [(False, 200), (True, 200), (True, 304)]
    query = github.requests[0].query
    assert (query["state"], query["sort"], query["direction"]) == (["closed"], ["updated"],
                                                                   ["desc"])
    assert notices(adapters) == [("feishu", "oc_0123456789abcdef", 1212),
                                 ("slack", "C0123456", 1212),
                                 ("telegram", "-1001234567890", 1212)]


async def test_a_restarted_poller_keeps_its_etag_and_sends_nothing_twice(
    github: ConditionalGitHub
) -> None:
    clock = VirtualClock(NOW)
    port = memory_port(clock)
    adapters = recording_adapters()
    poller, client, hub = poller_for(github, port, adapters, clock)
    await poller.poll_once()
    github.put(merged_later(1201, clock, 1))
    clock.advance(timedelta(minutes=5))
    await clock.sleep(0.02)
    await poller.poll_once()
    await client.close()
    hub.close()
    restarted, client, hub = poller_for(github, port, adapters, clock)
    clock.advance(timedelta(minutes=5))
    await clock.sleep(0.02)
    await restarted.poll_once()
    await client.close()
    hub.close()
    assert github.requests[-1].status == 304
    assert notices(adapters) == [("slack", "C0123456", 1201)]


async def test_replicas_share_one_poll_per_interval(
    github: ConditionalGitHub
) -> None:
    clock = VirtualClock(NOW)
    port = memory_port(clock)
    made = [poller_for(github, port, recording_adapters(), clock) for _ in range(3)]
    for poller, _, _ in made:
        poller.interval_seconds = 60
    await asyncio.gather(*(poller.poll_once() for poller, _, _ in made))
    for _, client, hub in made:
        await client.close()
        hub.close()
    assert len(github.requests) == 1


async def test_the_server_polls_when_no_webhook_secret_is_set(
    github: ConditionalGitHub, redis_url: str
) -> None:
    clock = HeldClock(NOW)
    adapters = recording_adapters()
    hub = Github(base_url=github.base_url, retry=None, seconds_between_requests=None,
                 seconds_between_writes=None)
    app = create_app(example_config(), redis_url=redis_url,
                     source=SnapshotSource(example_snapshot()), adapters=adapters, clock=clock,
                     pull_lister=PullLister(hub.requester))
    services = services_of(app)
    assert services.process.poller is not None
    services.process.poller.interval_seconds = 0.05
    services.process.scheduler = None  # this test is about notices only
    async with serving(app) as http:
        for _ in range(100):
            if services.process.poller.polls:
                break
            await asyncio.sleep(0.02)
        github.put(merged_later(1209, clock, 1))
        clock.advance(timedelta(minutes=5))
        for _ in range(200):
            if notices(adapters):
                break
            await asyncio.sleep(0.02)
        health = (await http.get("/healthz")).json()
    hub.close()
    assert health["merge_notices"]["mode"] == "poller"
    # #1209 is trainer and checkpoint: Telegram and Feishu follow those.
    assert notices(adapters) == [("feishu", "oc_0123456789abcdef", 1209),
                                 ("telegram", "-1001234567890", 1209)]
    assert re.search(r"checkpoint", str(adapters["feishu"].replies[0][1].pull))
