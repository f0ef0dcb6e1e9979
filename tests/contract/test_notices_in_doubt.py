"""A merged-PR notice or batch whose sender died after Slack took it, before the claim
was finished: the replica that takes the claim over finds the message in the channel
(or the digest's thread) by the claim key in its metadata, and sends nothing again -
while one whose sender died before posting is still sent, once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import msgspec
import pytest_asyncio

from adapters.poster import AdapterNotices
from adapters.slack.adapter import SlackAdapter
from adapters.slack.payloads import NOTICE_EVENT
from adapters.slack.settings import SlackSecrets, SlackSettings
from bot.clock import HeldClock
from bot.config import ChannelConfig, Config
from bot.delivery.batches import BatchFlusher
from bot.delivery.notices import MergeNotifier
from bot.digests import Digests
from bot.engine import build_digest
from bot.models import PullRequest, Reply
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.memory import MemoryCoordination
from bot.store.notice_batches import NoticeBatches
from testkit import EXAMPLES
from testkit.coordination import claims_on, local_claims
from testkit.fakes.slack import BOT_TOKEN, FakeSlack
from testkit.server_support import NOW, REPO, example_config, example_snapshot, snapshot_pull

CHANNEL = "C0123456"  # slack:C0123456 follows npu
SLACK = f"slack:{CHANNEL}"
BURST = (1208, 1212)  # both touch npu
ALIVE = 0.3


class NoHandler:
    async def chat_channel(self, chat: str) -> None:
        return None

    async def handle(self, command: Any, **_: Any) -> Reply:
        raise AssertionError("no question is asked here")


class Dies:
    """The real adapter's sender, in a replica killed mid-post: after Slack took the
    message (`after_post`) or before anything was sent; the send never returns."""

    def __init__(self, inner: AdapterNotices, *, after_post: bool) -> None:
        self.inner = inner
        self.after_post = after_post
        self.reached = asyncio.Event()

    def can_send(self, channel: ChannelConfig) -> bool:
        return self.inner.can_send(channel)

    async def send(self, channel: ChannelConfig, reply: Reply, *, thread: str | None = None,
                   key: str | None = None) -> list[str]:
        if self.after_post:
            await self.inner.send(channel, reply, thread=thread, key=key)
        self.reached.set()
        await asyncio.Event().wait()
        raise AssertionError("never returns")

    async def complete(self, channel: ChannelConfig, reply: Reply, *, key: str,
                       since: datetime, thread: str | None = None) -> list[str] | None:
        return await self.inner.complete(channel, reply, key=key, since=since, thread=thread)


class FixedParent:
    def __init__(self, parent: str | None) -> None:
        self.parent_id = parent

    async def parent(self, channel: Any, at: datetime) -> str | None:
        return self.parent_id


@pytest_asyncio.fixture(loop_scope="function")
async def world(port: MemoryCoordination
                ) -> AsyncIterator[tuple[FakeSlack, SlackAdapter, MemoryCoordination]]:
    with FakeSlack() as fake:
        adapter = SlackAdapter(example_config(), NoHandler(), local_claims(),
                               SlackSecrets(BOT_TOKEN), SlackSettings(api_url=fake.base_url),
                               outbound_only=True)
        yield fake, adapter, port
        await adapter.close()


def config_with(**changes: Any) -> Config:
    config = example_config()
    channels = tuple(msgspec.structs.replace(c, **changes) if c.key == SLACK else c
                     for c in config.channels)
    return msgspec.structs.replace(config, channels=channels)


def replicas(world: tuple[FakeSlack, SlackAdapter, MemoryCoordination],
             config: Config, *, after_post: bool = True, parent: str | None = None
             ) -> tuple[tuple[MergeNotifier, BatchFlusher, Dies], tuple[MergeNotifier,
                                                                      BatchFlusher]]:
    """(the doomed replica, the survivor), sharing the world's store; merges are seen
    at NOW, batches flushed once due."""
    _, adapter, port = world
    made = []
    for doomed in (True, False):
        claims = claims_on(port, alive_seconds=ALIVE)
        sender: Any = AdapterNotices({"slack": adapter})
        if doomed:
            sender = Dies(sender, after_post=after_post)
        notifier = MergeNotifier(Digests(config, SnapshotSource(example_snapshot())), claims,
                                 sender, clock=HeldClock(NOW), batches=NoticeBatches(port),
                                 threads=FixedParent(parent))  # type: ignore[arg-type]
        assert notifier.batches is not None
        flusher = BatchFlusher(config, notifier, notifier.batches, claims,
                               clock=HeldClock(NOW + timedelta(minutes=6)))
        made.append((notifier, flusher, sender))
    (n1, f1, dies), (n2, f2, _) = made
    return (n1, f1, dies), (n2, f2)


def merged(number: int) -> PullRequest:
    return msgspec.structs.replace(snapshot_pull(number), merged_at=NOW, closed_at=NOW)


def notices_posted(fake: FakeSlack) -> list[dict[str, Any]]:
    return [p for p in fake.posted() if p.get("channel") == CHANNEL]


async def kill(work: asyncio.Future[Any], reached: asyncio.Event, port: Any) -> None:
    """Wait until the doomed replica is mid-post, then kill it: no finish, no release,
    and its alive mark lapses."""
    await asyncio.wait_for(reached.wait(), 5)
    work.cancel()
    await port.clock.sleep(ALIVE + 0.3)


async def test_a_notice_slack_took_before_its_sender_died_is_not_sent_again(
        world: Any) -> None:
    fake = world[0]
    (doomed, _, dies), (survivor, _) = replicas(world, example_config())
    doomed_work = asyncio.ensure_future(doomed.announce(REPO, merged(1212)))
    await kill(doomed_work, dies.reached, world[2])
    assert len(notices_posted(fake)) == 1
    result = await survivor.announce(REPO, merged(1212))
    [posted] = notices_posted(fake)
    assert SLACK in result.notified  # recorded as sent
    assert posted["metadata"]["event_type"] == NOTICE_EVENT
    assert len(fake.calls("conversations.history")) == 1
    again = await survivor.announce(REPO, merged(1212))  # finished: seen, not looked up
    assert SLACK not in again.notified and len(notices_posted(fake)) == 1


async def test_a_notice_whose_sender_died_before_posting_is_sent_once(
        world: Any) -> None:
    fake = world[0]
    (doomed, _, dies), (survivor, _) = replicas(world, example_config(),
                                                after_post=False)
    doomed_work = asyncio.ensure_future(doomed.announce(REPO, merged(1212)))
    await kill(doomed_work, dies.reached, world[2])
    assert notices_posted(fake) == []
    result = await survivor.announce(REPO, merged(1212))
    assert SLACK in result.notified and len(notices_posted(fake)) == 1
    assert len(fake.calls("conversations.history")) == 1  # looked, found nothing


async def test_a_batch_slack_took_before_its_sender_died_is_dropped_not_resent(
        world: Any) -> None:
    fake = world[0]
    config = config_with(notice_batch_minutes=5)
    (doomed, doomed_flusher, dies), (_, survivor) = replicas(world, config)
    for number in BURST:
        await doomed.announce(REPO, merged(number))
    doomed_work = asyncio.ensure_future(doomed_flusher.flush_due())
    await kill(doomed_work, dies.reached, world[2])
    assert len(notices_posted(fake)) == 1
    result = await survivor.flush_due()
    assert result.notified == [SLACK] and len(notices_posted(fake)) == 1
    assert (await survivor.flush_due()).notified == []  # the batch is gone, not due again
    assert len(notices_posted(fake)) == 1


async def test_a_threaded_notice_is_found_under_the_digest_message(
        world: Any) -> None:
    fake, adapter, _ = world
    digest = build_digest(read_snapshot(EXAMPLES / "snapshot.json"), "2026-W29",
                          repo_config=example_config().repo(REPO), lang="en")
    [parent, *_] = await adapter.post_digest(CHANNEL, digest)
    config = config_with(notices="thread")
    (doomed, _, dies), (survivor, _) = replicas(world, config, parent=parent)
    doomed_work = asyncio.ensure_future(doomed.announce(REPO, merged(1212)))
    await kill(doomed_work, dies.reached, world[2])
    result = await survivor.announce(REPO, merged(1212))
    replies = [p for p in fake.posted() if p.get("thread_ts") == parent]
    assert SLACK in result.notified and len(replies) == 1
    assert len(fake.calls("conversations.replies")) == 1
    assert fake.calls("conversations.history") == []  # found in the thread first
