"""Merges GitHub delivered while Redis was down (answered 503, which GitHub does not
redeliver by itself) are announced afterwards by the poller's reconciliation pass,
each once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import msgspec
import pytest
from github import Github

from adapters.poster import AdapterNotices
from bot.delivery.notices import MergeNotifier
from bot.digests import Digests
from bot.github.closed import PullLister
from bot.models import PullRequest
from bot.source import SnapshotSource
from bot.web.app import create_app
from testkit.coordination import local_claims
from testkit.reliability.killable_redis import KillableRedis
from testkit.server_support import (
    REPO,
    WEBHOOK_SECRET,
    ConditionalGitHub,
    RecordingAdapter,
    clear_env,
    example_config,
    example_snapshot,
    merged_event,
    notices,
    recording_adapters,
    services_of,
    serving,
    snapshot_pull,
    webhook_request,
)

pytestmark = [pytest.mark.kills, pytest.mark.redis]  # processes (or Redis) killed and restarted

OUTAGE_SECONDS = 20.0
MERGED = (1201, 1202, 1203, 1209, 1212)


@pytest.fixture
def redis_server() -> Iterator[KillableRedis]:
    with KillableRedis() as server:
        yield server


def merged_now(number: int) -> PullRequest:
    moment = (datetime.now(UTC)).replace(microsecond=0)
    return msgspec.structs.replace(snapshot_pull(number), merged_at=moment, closed_at=moment,
                                   updated_at=moment)


async def once_each(numbers: tuple[int, ...]) -> list[tuple[str, str, int]]:
    """The notices one announcement of each merge sends, Redis or not."""
    adapters = recording_adapters()
    notifier = MergeNotifier(Digests(example_config(), SnapshotSource(example_snapshot())),
                             local_claims(), AdapterNotices(adapters))
    for number in numbers:
        await notifier.announce(REPO, snapshot_pull(number))
    return notices(adapters)


async def wait_for(adapters: dict[str, RecordingAdapter], count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(notices(adapters)) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.1)


async def test_merges_answered_503_in_a_redis_outage_are_announced_once_afterwards(
    monkeypatch: pytest.MonkeyPatch, redis_server: KillableRedis
) -> None:
    clear_env(monkeypatch)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", WEBHOOK_SECRET)
    adapters = recording_adapters()
    with ConditionalGitHub() as github:
        hub = Github(base_url=github.base_url, retry=None, seconds_between_requests=None,
                     seconds_between_writes=None)
        app = create_app(example_config(), redis_url=redis_server.url,
                         source=SnapshotSource(example_snapshot()), adapters=adapters,
                         pull_lister=PullLister(hub.requester))
        services = services_of(app)
        assert services.process.poller is not None, "with a webhook the poller reconciles"
        services.process.poller.interval_seconds = 0.5
        services.process.scheduler = None  # this test is about notices only
        answers = []
        async with serving(app) as http:
            while not services.process.poller.polls:
                await asyncio.sleep(0.05)
            redis_server.kill()
            started = time.monotonic()
            for index, number in enumerate(MERGED):
                pull = merged_now(number)
                github.put(pull)  # GitHub's list shows the merge...
                body, headers = webhook_request(merged_event(pull), delivery=f"d-{number}")
                answer = await http.post("/github/webhook", content=body, headers=headers)
                answers.append(answer.status_code)  # ...its delivery finds Redis away
                await asyncio.sleep(max(started + (index + 1) * OUTAGE_SECONDS / len(MERGED)
                                        - time.monotonic(), 0))
            before = notices(adapters)
            redis_server.start()
            expected = await once_each(MERGED)
            await wait_for(adapters, len(expected), timeout=60)
            await asyncio.sleep(1.5)  # a few more reconciliation rounds: nothing again
            health = (await http.get("/healthz")).json()
        hub.close()
    assert answers == [503] * len(MERGED)
    assert before == []
    assert sorted(notices(adapters)) == sorted(expected), (notices(adapters), expected)
    assert health["merge_notices"]["mode"] == "webhook"
    assert health["merge_notices"]["reconcile"]["announced"] == len(MERGED)
