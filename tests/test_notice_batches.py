"""Batched and threaded notices: a burst of merges on a channel's topics is one message,
sent by one of several replicas, once per PR - also when the replica sending it is
killed mid-batch - and threaded notices go under the digest the ledger recorded for the
week. The replicas share a store in memory, on a virtual clock (the contract suite
holds Redis to the same batch steps)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import msgspec
import pytest

from bot.config import ChannelConfig, Config, parse_config
from bot.delivery.batches import BatchFlusher
from bot.delivery.notices import MergeNotifier
from bot.delivery.threads import digest_week
from bot.digests import Digests
from bot.errors import ConfigError, DeliveryInDoubt
from bot.models import PullRequest, Reply
from bot.source import SnapshotSource
from bot.store.claims import Claims
from bot.store.coordination import Coordination
from bot.store.keys import Keys
from bot.store.ledger import Ledger, LedgerEntry, Slot
from bot.store.notice_batches import NoticeBatches
from testkit.clock import VirtualClock
from testkit.coordination import memory_port
from testkit.server_support import NOW, REPO, example_config, example_snapshot, snapshot_pull

SLACK = "slack:C0123456"  # follows npu and rollout
BURST = (1208, 1212)  # both touch npu



class Sender:
    """Records what each channel got; `hang` makes sends to the batched channel never
    return (a replica frozen mid-batch, then killed)."""

    def __init__(self, sent: list[tuple[str, Reply, str | None]], *, hang: bool = False
                 ) -> None:
        self.sent = sent
        self.hang = hang
        self.started = asyncio.Event()

    def can_send(self, channel: ChannelConfig) -> bool:
        return True

    async def send(self, channel: ChannelConfig, reply: Reply, *, thread: str | None = None,
                   key: str | None = None) -> list[str]:
        if channel.key == SLACK:
            self.started.set()
            if self.hang:
                await asyncio.Event().wait()
        self.sent.append((channel.key, reply, thread))
        return ["m1"]

    async def complete(self, channel: ChannelConfig, reply: Reply, *, key: str,
                       since: datetime, thread: str | None = None) -> list[str] | None:
        return None  # a platform that cannot tell: a batch in doubt is sent again


def batched_config(minutes: int = 5, notices: str = "channel") -> Config:
    config = example_config()
    channels = tuple(msgspec.structs.replace(c, notice_batch_minutes=minutes, notices=notices)
                     if c.key == SLACK else c for c in config.channels)
    return msgspec.structs.replace(config, channels=channels)


def replica(config: Config, port: Coordination, clock: VirtualClock,
            sent: list[tuple[str, Reply, str | None]], **options: Any
            ) -> tuple[MergeNotifier, BatchFlusher, Sender]:
    claims = Claims(port, alive_seconds=options.pop("alive_seconds", 10.0), clock=clock)
    sender = Sender(sent, **options)
    notifier = MergeNotifier(Digests(config, SnapshotSource(example_snapshot())), claims, sender,
                             clock=clock, batches=NoticeBatches(port))
    assert notifier.batches is not None
    return notifier, BatchFlusher(config, notifier, notifier.batches, claims, clock=clock), sender


def merged(number: int, at: datetime) -> PullRequest:
    return msgspec.structs.replace(snapshot_pull(number), merged_at=at, closed_at=at)


def slack_notices(sent: list[tuple[str, Reply, str | None]]) -> list[tuple[int, ...]]:
    """The PR numbers of each message Slack got, one tuple per message."""
    return [tuple(n.pull.number for n in (reply.notices or (reply,)) if n.pull is not None)
            for key, reply, _ in sent if key == SLACK]


async def test_a_burst_is_one_message_sent_once_by_one_of_three_replicas(
        ) -> None:
    config, clock, sent = batched_config(), VirtualClock(NOW), []
    port = memory_port(clock)
    replicas = [replica(config, port, clock, sent) for _ in range(3)]
    # Each replica sees each merge (webhook redeliveries, polls), a minute apart.
    for minute, number in enumerate(BURST):
        pull = merged(number, NOW + timedelta(minutes=minute))
        results = await asyncio.gather(*(n.announce(REPO, pull) for n, _, _ in replicas
                                         for _ in range(2)))
        assert sum(SLACK in r.batched for r in results) == 1
    clock.set(NOW + timedelta(minutes=4))  # not due yet: the window runs 5 minutes
    await asyncio.gather(*(f.flush_due() for _, f, _ in replicas))
    assert slack_notices(sent) == []
    clock.set(NOW + timedelta(minutes=5, seconds=1))
    await asyncio.gather(*(f.flush_due() for _, f, _ in replicas for _ in range(2)))
    assert slack_notices(sent) == [BURST]
    [(_, reply, _)] = [s for s in sent if s[0] == SLACK]
    assert reply.kind == "notices" and reply.lang == "zh"
    # Seen again after the batch went out: no second notice, no new batch.
    again = await replicas[0][0].announce(REPO, merged(1212, NOW))
    clock.advance(timedelta(minutes=10))
    await replicas[1][1].flush_due()
    assert SLACK not in again.batched and slack_notices(sent) == [BURST]


async def test_a_replica_killed_mid_batch_leaves_it_to_another_once(
        ) -> None:
    config, clock, sent = batched_config(), VirtualClock(NOW), []
    port = memory_port(clock)
    # Its alive mark lives 2 s, nothing refreshes it: held while the survivor first
    # looks, and lapsed after the kill.
    doomed, doomed_flusher, frozen = replica(config, port, clock, sent, hang=True,
                                             alive_seconds=2)
    _, survivor, _ = replica(config, port, clock, sent)
    for number in BURST:
        await doomed.announce(REPO, merged(number, NOW))
    clock.set(NOW + timedelta(minutes=6))
    flushing = asyncio.create_task(doomed_flusher.flush_due())
    await asyncio.wait_for(frozen.started.wait(), 5)
    await survivor.flush_due()  # the doomed replica is alive and holds the batch
    assert slack_notices(sent) == []
    flushing.cancel()  # the kill: no finish, no release, and its alive mark lapses
    async with asyncio.timeout(30):
        while not slack_notices(sent):  # taken over once the mark has lapsed
            await survivor.flush_due()
            await clock.sleep(0.5)
    await survivor.flush_due()
    assert slack_notices(sent) == [BURST]


async def test_merges_after_a_batch_went_out_open_the_next_one(
        ) -> None:
    config, clock, sent = batched_config(minutes=1), VirtualClock(NOW), []
    port = memory_port(clock)
    notifier, flusher, _ = replica(config, port, clock, sent)
    await notifier.announce(REPO, merged(1208, NOW))
    clock.set(NOW + timedelta(minutes=2))
    await flusher.flush_due()
    await notifier.announce(REPO, merged(1212, clock.now()))
    await flusher.flush_due()  # the second batch is not due yet
    clock.advance(timedelta(minutes=2))
    await flusher.flush_due()
    assert slack_notices(sent) == [(1208,), (1212,)]
    # A lone merge is the plain notice, not a list of one.
    assert [r.kind for k, r, _ in sent if k == SLACK] == ["pull", "pull"]


async def test_threaded_notices_go_under_the_weeks_digest_once_it_is_posted(
        ) -> None:
    config, clock, sent = batched_config(minutes=0, notices="thread"), VirtualClock(NOW), []
    port = memory_port(clock)
    notifier, _, _ = replica(config, port, clock, sent)
    channel = next(c for c in config.channels if c.key == SLACK)
    await notifier.announce(REPO, merged(1208, NOW))  # no digest posted yet this week
    week = digest_week(channel, NOW)
    entry = LedgerEntry(state="posted", week=week, channel=SLACK, repo=REPO,
                        delivery_key="k", message_ids=("1700000000.000001", "1700000000.2"))
    await Ledger(port).record_posted(Slot(week, SLACK, REPO), entry)
    await notifier.announce(REPO, merged(1212, NOW))
    threads = [thread for key, _, thread in sent if key == SLACK]
    assert threads == [None, "1700000000.000001"]
    # The other channels keep top-level notices.
    assert {thread for key, _, thread in sent if key != SLACK} == {None}


def test_digest_week_is_the_week_before_in_the_channels_time_zone() -> None:
    channel = next(c for c in example_config().channels if c.key == SLACK)
    assert digest_week(channel, NOW) == "2026-W29"  # NOW is in 2026-W30


@pytest.mark.parametrize(("field", "value", "message"), [
    ("notice_batch_minutes", -1, "channels[0].notice_batch_minutes: must be"),
    ("notice_batch_minutes", 1441, "channels[0].notice_batch_minutes: must be"),
    ("notice_batch_minutes", 1.5, "notice_batch_minutes"),
    ("notices", "threads", "notices"),
])
def test_bad_notice_settings_are_config_errors_naming_the_field(
        field: str, value: object, message: str) -> None:
    data = {"repos": {REPO: {}},
            "channels": [{"platform": "slack", "id": "C1", "repo": REPO, field: value}]}
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_config(data)


def test_notice_settings_default_to_top_level_and_unbatched() -> None:
    config = parse_config({"repos": {REPO: {}},
                           "channels": [{"platform": "slack", "id": "C1", "repo": REPO}]})
    assert (config.channels[0].notices, config.channels[0].notice_batch_minutes) == \
        ("channel", 0)


def test_keys_of_one_batch_share_a_cluster_slot() -> None:
    keys = Keys("p")
    tagged = [keys.notice_batch(SLACK), keys.notice_batch_out(SLACK),
              keys.claim(Keys.batched_notice(SLACK, REPO, 1))]
    assert {name[name.index("{") + 1:name.index("}")] for name in tagged} == {SLACK}


async def test_a_channel_of_several_repositories_finds_its_digest_as_its_thread(
        ) -> None:
    """Its digest is recorded under the slot naming every listed repository: a notice
    of either repository goes under that message."""
    from bot.delivery.threads import ThreadParents

    channel = ChannelConfig(platform="slack", id="CBOTH", repos=(REPO, "acme/prism"),
                            notices="thread")
    port = memory_port()
    week = digest_week(channel, NOW)
    entry = LedgerEntry(state="posted", week=week, channel=channel.key, repo=channel.scope,
                        delivery_key="k", message_ids=("1700000000.000009",))
    await Ledger(port).record_posted(Slot(week, channel.key, channel.scope), entry)
    parent = await ThreadParents(Ledger(port)).parent(channel, NOW)
    assert parent == "1700000000.000009"


@pytest.mark.parametrize("resend", [False, True], ids=["hold", "resend"])
async def test_a_batch_whose_send_is_in_doubt_follows_the_platforms_in_doubt(
        resend: bool) -> None:
    """A send that timed out after the platform may have taken it: `hold` drops the
    batch as sent (never twice), `resend` leaves it for the next pass (never lost)."""
    config, clock, sent = batched_config(), VirtualClock(NOW), []
    port = memory_port(clock)
    notifier, flusher, sender = replica(config, port, clock, sent)
    await notifier.announce(REPO, merged(BURST[0], NOW))
    answered = sender.send
    stalled: list[str] = []

    async def times_out(channel: ChannelConfig, reply: Reply, **options: Any) -> list[str]:
        if channel.key == SLACK and not stalled:
            stalled.append(channel.key)  # taken, or not: the answer never came
            raise DeliveryInDoubt("no answer", resend=resend)
        return await answered(channel, reply, **options)

    sender.send = times_out  # type: ignore[method-assign]
    clock.set(NOW + timedelta(minutes=5, seconds=1))
    first = await flusher.flush_due()
    assert (first.held, first.failed) == (([], [SLACK]) if resend else ([SLACK], []))
    clock.advance(timedelta(minutes=1))
    again = await flusher.flush_due()
    assert slack_notices(sent) == ([(BURST[0],)] if resend else [])
    assert again.notified == ([SLACK] if resend else [])
