"""Batched and threaded merged-PR notices with replicas SIGKILLed under them.

Both runs start real `prdigest serve` replicas (`testkit.reliability.replicas`) on one
Redis, with a channel on each platform following the `npu` topic, and send the signed
GitHub deliveries of merged NPU PRs round-robin over the replicas. One replica is
killed with a delivery in flight (its read of the PR from GitHub parked); the
deliveries it can no longer take, and the one it died with, are redelivered to a live
replica once its alive mark has lapsed, as GitHub's "redeliver" would; then every
delivery is sent once more to another replica (a redelivery under the same id).

`batched_under_kills`: the channels batch their notices for a minute. When the batch
is due, each platform's batch post is parked - Slack's and Telegram's before the
platform sees it, Feishu's after Feishu took it (its `uuid` drops the copy sent
again) - and every replica holding one is killed a few seconds later; the survivors
(or one of the killed, restarted) must send each batch once.

`threaded_under_kills`: the channels want notices in the thread of the week's digest,
which the schedule posts while the replicas posting it are killed (Slack's post parked
after Slack took it, the others' before). Notices then go under the digest message
that was recorded, each once, across a replica killed with a Feishu notice taken by
Feishu but not yet answered.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis

from bot.config import load_config
from bot.models import PullRequest
from bot.store.keys import Keys
from bot.store.ledger import Slot, decode_entry
from testkit.fakes.feishu import SentCard
from testkit.fakes.github_fixtures import github_complete
from testkit.reliability.names import REPO, TZ
from testkit.reliability.posts import count_posts, feishu_visible, previous_week, week_pulls_for
from testkit.reliability.replicas import Delivery, Replicas, merge_delivery
from testkit.reliability.serve_runner import ALIVE_WAIT
from testkit.reliability.world import World, config_text, world

NEVER_DUE = "0 9 1 1 *"
"""The other channels' schedule: not due during a run (the full config's four)."""
CHANNELS = {"slack": "CNOTICE01", "telegram": "-1005550001111", "feishu": "oc_notice0000aaaa"}
LANGS = {"slack": "en", "telegram": "en", "feishu": "zh"}
PLATFORMS = tuple(CHANNELS)
BURST = 9
FIRST_NUMBER = 2001
BATCH_MINUTES = 1
STALL_SECONDS = 3.0
"""How long a replica holding a batch post lives on: three of the others' passes."""
_PULL_LINK = re.compile(re.escape(REPO) + r"/pull/(\d+)")


def npu_pulls(count: int, *, first: int = FIRST_NUMBER) -> list[PullRequest]:
    """NPU changes merged in the last hour (a topic the channels follow)."""
    at = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    return [github_complete(PullRequest(
        number=number, title=f"[npu] fix: hccl stream {number}",
        url=f"https://github.com/{REPO}/pull/{number}", author=f"dev{number % 4}",
        state="merged", draft=False, created_at=at - timedelta(days=1), updated_at=at,
        merged_at=at + timedelta(minutes=index), closed_at=at + timedelta(minutes=index),
        base="main", labels=(), body="Keeps the ascend stream alive.", additions=12,
        deletions=3, changed_files=1, files=(), reviews=(), review_threads=(), comments=(),
        checks="success"))
        for index, number in enumerate(range(first, first + count))]


def channels_text(settings: str, schedule: str) -> str:
    """The three following channels, one per platform, each with `settings`."""
    return "".join(f"""
[[channels]]
platform = "{platform}"
id = "{channel}"
repo = "{REPO}"
lang = "{LANGS[platform]}"
schedule = "{schedule}"
timezone = "{TZ}"
topics = ["npu"]
{settings}
""" for platform, channel in CHANNELS.items())


# --- what each channel got ---------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """One message a following channel shows: the PRs it lists, and the message it
    replies under (None at the top level)."""

    pulls: frozenset[int]
    parent: str | None


def _numbers(text: str) -> frozenset[int]:
    return frozenset(int(n) for n in _PULL_LINK.findall(text))


def channel_messages(fakes: World, platform: str) -> list[Message]:
    """What the platform's following channel shows, in arrival order (a Feishu card
    re-sent with a uuid already taken is not shown twice)."""
    channel = CHANNELS[platform]
    if platform == "slack":
        return [Message(_numbers(json.dumps(p.get("blocks")) + str(p.get("text"))),
                        p.get("thread_ts") or None)
                for p in fakes.slack.posted() if p.get("channel") == channel]
    if platform == "telegram":
        return [Message(_numbers(r.fields.get("text", "") + r.fields.get("reply_markup", "")),
                        None if r.reply_to is None else str(r.reply_to))
                for r in fakes.telegram.calls("sendMessage")
                if r.accepted and r.fields.get("chat_id") == channel]
    shown: list[Message] = []
    seen: set[str] = set()
    for card in feishu_cards(fakes):
        if card.uuid is not None and card.uuid in seen:
            continue
        seen.update([card.uuid] if card.uuid else [])
        shown.append(Message(_numbers(card.content),
                             card.target if card.endpoint == "reply" else None))
    return shown


def feishu_cards(fakes: World) -> list[SentCard]:
    """Every card Feishu took for its following channel or a thread in it, copies
    re-sent with a uuid it already had included."""
    channel = CHANNELS["feishu"]
    cards = fakes.feishu.sent_cards()
    ids = {card.message_id for card in cards if card.target == channel}
    return [card for card in cards if card.target == channel
            or (card.endpoint == "reply" and card.target in ids)]


def feishu_copies(fakes: World, numbers: list[int]) -> dict[int, int]:
    """How many cards Feishu took listing each PR (a copy it dropped by uuid too)."""
    return {n: sum(n in _numbers(card.content) for card in feishu_cards(fakes))
            for n in numbers}


def listings(messages: list[Message], numbers: list[int]) -> dict[int, int]:
    """In how many messages each PR is listed."""
    return {n: sum(n in m.pulls for m in messages) for n in numbers}


# --- batched -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchOutcome:
    """Each platform's messages, which replicas died holding a batch, and timings."""

    numbers: list[int]
    messages: dict[str, list[Message]]
    plain_notices: dict[int, int]  # the full config's unbatched Slack channel, per PR
    in_flight_status: int | None  # the delivery the burst's victim died with
    redelivered: dict[int, int]
    repeated: list[int]
    killed_mid_batch: list[int]
    stalled: dict[str, int]  # what each platform had while the holders lived
    feishu_copies: dict[int, int]  # cards Feishu took per PR, its uuid's drops included
    open_batches: int
    seconds: float

    def listed_once(self) -> bool:
        return all(set(listings(m, self.numbers).values()) == {1}
                   for m in self.messages.values())


def _burst(replicas: Replicas, deliveries: list[Delivery]) -> tuple[int | None, list[Delivery],
                                                                     float]:
    """Round-robin over the replicas; the last one is killed with its second delivery
    in flight. The status of that delivery, those to redeliver, and when it died."""
    victim = replicas[len(replicas.replicas) - 1]
    doomed = deliveries[2 * len(replicas.replicas) - 1]
    again: list[Delivery] = []
    in_flight: list[int | None] = []
    killed = 0.0
    for index, delivery in enumerate(deliveries):
        replica = replicas[index % len(replicas.replicas)]
        if delivery is doomed:
            hold = replica.park("github", "/")  # its next GitHub request: reading the PR
            sender = threading.Thread(target=lambda r=replica, d=delivery:
                                      in_flight.append(r.deliver(d)), daemon=True)
            sender.start()
            if not hold.parked.wait(15):
                raise RuntimeError(f"no GitHub read parked: {replicas.log_tail()}")
            victim.kill()
            killed = time.monotonic()
            sender.join(10)
            again.append(delivery)
            continue
        status = replica.deliver(delivery)
        if status is None:
            again.append(delivery)  # refused by the dead replica: GitHub retries later
        elif status != 200:
            raise RuntimeError(f"delivery of #{delivery.number}: {status}")
    return (in_flight or [None])[0], again, killed


def _wait_for(check: Callable[[], bool], timeout: float, what: str, replicas: Replicas
              ) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: {replicas.log_tail()}")
        time.sleep(0.1)


def batched_under_kills(redis_url: str, workdir: Path, *, count: int = 3) -> BatchOutcome:
    """The burst with a replica killed mid-delivery, then the batch posts with every
    replica sending one killed."""
    started = time.monotonic()
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    pulls = npu_pulls(BURST)
    numbers = [p.number for p in pulls]
    settings = f"notice_batch_minutes = {BATCH_MINUTES}"
    with contextlib.ExitStack() as stack:
        fakes = stack.enter_context(world(pulls=pulls))
        replicas = Replicas(stack, fakes, redis_url, workdir, count, lambda urls: config_text(
            urls, schedule=NEVER_DUE, catch_up_hours=1,
            extra=channels_text(settings, NEVER_DUE)))
        replicas.start()
        deliveries = [merge_delivery(p, REPO) for p in pulls]
        opened = time.monotonic()  # the first merge opens the batches
        in_flight, again, killed = _burst(replicas, deliveries)
        time.sleep(max(0.0, killed + ALIVE_WAIT - time.monotonic()))
        survivor = replicas.alive()[0]
        redelivered = {d.number: survivor.deliver(d) or 0 for d in again}
        victim = [r for r in replicas if not r.alive]
        replicas.start(victim)
        # Every delivery once more, each to a replica that did not take it first.
        repeated = [replicas[(i + 1) % count].deliver(d) or 0
                    for i, d in enumerate(deliveries)]
        if time.monotonic() - opened > BATCH_MINUTES * 60 - 5:
            raise RuntimeError("the burst outlasted the batch window")
        # Feishu takes its batch, the sender dies before hearing so; the others are lost.
        parks = [replicas.park_first(p, "after" if p == "feishu" else "before")
                 for p in PLATFORMS]
        holders = replicas.wait_parked(parks, BATCH_MINUTES * 60 + 30)
        # The holders stall a few flush passes before dying: while one is alive, the
        # others find its batch claimed and leave it.
        time.sleep(STALL_SECONDS)
        stalled = {p: len(channel_messages(fakes, p)) for p in ("slack", "telegram")}
        stalled["feishu"] = max(feishu_copies(fakes, numbers).values())
        for index in holders:
            replicas[index].kill()
        if not replicas.alive():  # no one left to take them over: restart one
            replicas.start([replicas[holders[0]]])

        def all_listed() -> bool:
            return all(all(listings(channel_messages(fakes, p), numbers).values())
                       for p in PLATFORMS)

        _wait_for(all_listed, 60, "not every batch arrived", replicas)
        time.sleep(2.0)  # anything sent twice arrives now
        open_batches = len(client.keys(Keys().name("notice-batch", "*")))
        slack_plain = [p for p in fakes.slack.posted() if p.get("channel") == "C0123456"]
        plain = {n: sum(n in _numbers(json.dumps(p.get("blocks")) + str(p.get("text")))
                        for p in slack_plain) for n in numbers}
        messages = {p: channel_messages(fakes, p) for p in PLATFORMS}
        copies = feishu_copies(fakes, numbers)
    client.close()
    return BatchOutcome(numbers=numbers, messages=messages, plain_notices=plain,
                        in_flight_status=in_flight, redelivered=redelivered,
                        repeated=repeated, killed_mid_batch=holders, stalled=stalled,
                        feishu_copies=copies,
                        open_batches=open_batches, seconds=time.monotonic() - started)


# --- threaded ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThreadOutcome:
    """The digest each channel shows and its recorded message, and the notices."""

    numbers: list[int]
    parents: dict[str, str]
    digests: dict[str, tuple[int, int, int]]  # (delivered, duplicated, lost)
    messages: dict[str, list[Message]]
    killed_mid_digest: list[int]
    feishu_copies: dict[int, int]  # cards Feishu took per PR, its uuid's drops included
    in_doubt: int  # the notice Feishu took from the replica killed before hearing so
    seconds: float

    def notices(self, platform: str) -> list[Message]:
        return [m for m in self.messages[platform] if m.pulls & set(self.numbers)]


def _digest_parents(client: redis.Redis, config: Path, week: str) -> dict[str, str]:
    """The first message id of each following channel's recorded digest."""
    found: dict[str, str] = {}
    for channel in load_config(config).channels:
        if channel.id not in CHANNELS.values():
            continue
        raw = client.get(Keys().ledger(Slot(week, channel.key, channel.scope).name))
        entry = decode_entry(raw if isinstance(raw, bytes) or raw is None else bytes(raw))
        if entry is not None and entry.state == "posted" and entry.message_ids:
            found[channel.platform] = entry.message_ids[0]
    return found


def _digest_counts(fakes: World) -> dict[str, tuple[int, int, int]]:
    texts = {
        "slack": [json.dumps(p.get("blocks"), sort_keys=True) + str(p.get("text"))
                  for p in fakes.slack.posted() if p.get("channel") == CHANNELS["slack"]
                  and not p.get("thread_ts")],
        "telegram": [m.get("text", "") for m in fakes.telegram.sent()
                     if m.get("chat_id") == CHANNELS["telegram"]
                     and "reply_parameters" not in m],
        "feishu": feishu_visible(fakes.feishu, CHANNELS["feishu"]),
    }
    counts = {p: count_posts(t) for p, t in texts.items()}
    return {p: (c.delivered, c.duplicated, c.lost) for p, c in counts.items()}


def _post_digests(replicas: Replicas, client: redis.Redis, week: str) -> tuple[
        dict[str, str], list[int]]:
    """Start the replicas with the digests due, kill those posting one (Slack's taken
    by Slack, the others' lost in flight), and wait until every digest is recorded."""
    parks = [replicas.park_first("slack", "after"), replicas.park_first("telegram"),
             replicas.park_first("feishu")]
    replicas.start()
    holders = replicas.wait_parked(parks, 90)
    for index in holders:
        replicas[index].kill()
    if not replicas.alive():
        replicas.start([replicas[index] for index in holders])
    config = replicas[0].config
    _wait_for(lambda: len(_digest_parents(client, config, week)) == len(PLATFORMS), 90,
              "not every digest recorded", replicas)
    replicas.start([r for r in replicas if not r.alive])
    return _digest_parents(client, config, week), holders


def threaded_under_kills(redis_url: str, workdir: Path) -> ThreadOutcome:
    """Digests posted through kills, then notices through another kill (a Feishu
    notice taken but unanswered) and deliveries while that replica is down."""
    started = time.monotonic()
    week = previous_week()
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    pulls = npu_pulls(6)
    numbers = [p.number for p in pulls]
    with contextlib.ExitStack() as stack:
        fakes = stack.enter_context(world(pulls=week_pulls_for(week) + pulls))
        replicas = Replicas(stack, fakes, redis_url, workdir, 2, lambda urls: config_text(
            urls, schedule=NEVER_DUE, catch_up_hours=1,
            extra=channels_text('notices = "thread"', "* * * * *")))
        parents, holders = _post_digests(replicas, client, week)
        deliveries = [merge_delivery(p, REPO) for p in pulls]
        first, second = replicas[0], replicas[1]
        if first.deliver(deliveries[0]) != 200:
            raise RuntimeError(f"delivery refused: {replicas.log_tail()}")
        # Feishu takes the notice, the replica dies before hearing so.
        hold = second.park("feishu", "/reply", "after")
        sender = threading.Thread(target=second.deliver, args=(deliveries[1],), daemon=True)
        sender.start()
        if not hold.parked.wait(15):
            raise RuntimeError(f"no Feishu notice parked: {replicas.log_tail()}")
        second.kill()
        killed = time.monotonic()
        sender.join(10)
        again = [deliveries[1]] + [d for d in deliveries[2:4] if second.deliver(d) is None]
        if first.deliver(deliveries[4]) != 200:
            raise RuntimeError(f"delivery refused: {replicas.log_tail()}")
        time.sleep(max(0.0, killed + ALIVE_WAIT - time.monotonic()))
        redelivered = [first.deliver(d) for d in again]
        replicas.start([second])
        last = [second.deliver(deliveries[5]), second.deliver(deliveries[2])]
        if set(redelivered + last) != {200}:
            raise RuntimeError(f"redeliveries {redelivered} {last}: {replicas.log_tail()}")

        def all_noticed() -> bool:
            return all(all(listings(channel_messages(fakes, p), numbers).values())
                       for p in PLATFORMS)

        _wait_for(all_noticed, 30, "not every notice arrived", replicas)
        time.sleep(1.5)  # anything sent twice arrives now
        messages = {p: channel_messages(fakes, p) for p in PLATFORMS}
        digests = _digest_counts(fakes)
        copies = feishu_copies(fakes, numbers)
    client.close()
    return ThreadOutcome(numbers=numbers, parents=parents, digests=digests,
                         messages=messages, killed_mid_digest=holders,
                         feishu_copies=copies, in_doubt=deliveries[1].number,
                         seconds=time.monotonic() - started)


def describe(messages: Mapping[str, list[Message]]) -> str:
    return json.dumps({p: [[sorted(m.pulls), m.parent] for m in ms]
                       for p, ms in messages.items()})
