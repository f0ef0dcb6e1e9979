"""The notice a channel gets when a PR on its topics merges.

When a PR merges - told by the GitHub webhook, or found by the merge poller where no
webhook is set up - `MergeNotifier` sends each channel of that repository whose topics
the PR touches one short notice (title, topics, risk flag, link), once: a claim in Redis
per (PR, channel) makes sure of it, whatever replica, redelivery or poll sees the merge
again. A replica that dies between the platform's answer and `finish` leaves the claim
to another, which first asks the platform whether the notice arrived (Slack: by the key
in its message metadata) and sends it only when it did not or the platform cannot tell
(Feishu drops the copy by its `uuid`; Telegram shows it twice).

A send that timed out after the platform may have taken it (`DeliveryInDoubt`: Telegram,
which has neither a key nor a readable history) follows the platform's `in_doubt`, as a
weekly digest does: `resend` releases the claim and the next redelivery or poll sends
it again (never lost, possibly twice); `hold` records it as sent (never twice, possibly
not at all) and says so in a warning - a notice has no operator's `--force`.

A channel with `notices = "thread"` gets its notices under the week's digest message
(`bot.delivery.threads`), in the channel itself when there is none yet or it was
deleted. A channel with `notice_batch_minutes` gets its merges put in a batch in Redis
instead (`bot.store.notice_batches`), sent as one message when due
(`bot.delivery.batches`).

A channel that muted its notices from chat (`mute 1d`: `bot.store.mutes`) gets none
while the mute lasts: the merges of that time are dropped for it, not kept for later -
the merge counts as announced, so no redelivery or poll brings its notice after the
mute ends - and the first merge after the end is announced as usual. A batch falling
due during the mute is dropped likewise. The weekly digest is not muted."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import msgspec

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ChannelConfig, Config
from bot.delivery.threads import ThreadParents
from bot.digests import Digests
from bot.errors import DeliveryInDoubt, SourceError, ThreadGone
from bot.events import Events, NoticePosted
from bot.models import PullAnswer, PullRequest, Reply
from bot.source import ForgetsPulls, Source
from bot.store.claims import Begun, Claims, Held
from bot.store.coordination import StoreUnavailable
from bot.store.keys import Keys
from bot.store.ledger import Ledger
from bot.store.mutes import Mutes
from bot.store.notice_batches import BatchItem, NoticeBatches
from bot.store.subscriptions import TopicStore, followed_topics

log = logging.getLogger(__name__)

NOTICE_TTL_SECONDS = 90 * 24 * 3600
"""How long a sent notice is remembered: far longer than any redelivery or poll window."""

NOTICE_MODE = "merged"
"""`Reply.mode` of a merged-PR notice: a `pull` reply whose `topics` are the channel's
topics the PR touched and whose `author` param is who wrote it."""


def held_in_doubt(error: BaseException) -> bool:
    """Whether a send that failed may have arrived and its platform's `in_doubt` says to
    hold it: it is then recorded as sent, not retried."""
    return isinstance(error, DeliveryInDoubt) and not error.resend


class NoticeSender(Protocol):
    """Where notices go: the chat adapters, by the channel's platform."""

    def can_send(self, channel: ChannelConfig) -> bool:
        """False when the channel's platform is not configured (no notice is claimed)."""
        ...

    async def send(self, channel: ChannelConfig, reply: Reply, *, thread: str | None = None,
                   key: str | None = None) -> list[str]:
        """Post the notice, under the message `thread` when given; raises when the
        platform did not take it (`ThreadGone` when `thread` is no longer there). `key`
        is the same for every retry of one notice."""
        ...

    async def complete(self, channel: ChannelConfig, reply: Reply, *, key: str,
                       since: datetime, thread: str | None = None) -> list[str] | None:
        """The message ids of the notice `key` when the platform shows it arrived since
        `since` (under `thread` when given), posting any part missing; None when it
        cannot tell or nothing arrived."""
        ...


class MergeNotifier:
    """Sends one notice per (merged PR, subscribed channel), ever.

    The PR is read again through the source of the process's one `digests` (files
    give path topics, reviews the risks); when that fails, the event's own fields are
    used. The channels' subscriptions are the ones chat writes (`digests.subscriptions`),
    their mutes the ones chat sets (`mutes`: by default in the claims' port).
    """

    def __init__(
        self,
        digests: Digests,
        claims: Claims,
        sender: NoticeSender,
        *,
        events: Events | None = None,
        notice_ttl_seconds: int = NOTICE_TTL_SECONDS,
        threads: ThreadParents | None = None,
        batches: NoticeBatches | None = None,
        clock: Clock = SYSTEM_CLOCK,
        mutes: Mutes | None = None,
    ) -> None:
        self.source: Source | None = digests.source
        self.store: TopicStore | None = digests.subscriptions
        self.claims = claims
        self.sender = sender
        self.events = events or Events()
        self.notice_ttl_seconds = notice_ttl_seconds
        self.digests = digests
        # Threads under the digests the ledger records; batches where the store is
        # shared (Redis): a batch one process alone holds would die with it.
        self.threads = threads or ThreadParents(Ledger(claims.port, clock=clock))
        self.batches = batches if batches is not None else (
            NoticeBatches(claims.port) if claims.port.shared else None)
        self.clock = clock
        self.mutes = mutes if mutes is not None else Mutes(claims.port, clock=clock)

    @property
    def config(self) -> Config:
        """The config in force (a reload or a chat's `follow` changes it)."""
        return self.digests.config

    def _repo_name(self, repo: str) -> str | None:
        lowered = repo.lower()
        return next((name for name in self.config.repos if name.lower() == lowered), None)

    async def _full_pull(self, repo: str, event: PullRequest) -> PullRequest:
        if self.source is None:
            return event
        if isinstance(self.source, ForgetsPulls):
            # The merge changed the PR: a copy cached before it is out of date.
            await asyncio.to_thread(self.source.forget_pull, repo, event.number)
        try:
            found = await asyncio.to_thread(self.source.fetch_pull, repo, event.number)
        except SourceError as exc:
            log.warning("using the event's fields for %s#%s: %s", repo, event.number, exc)
            return event
        if found is None:
            return event
        if found.state != "merged":  # a cached copy from before the merge
            found = msgspec.structs.replace(found, state="merged", merged_at=event.merged_at,
                                            closed_at=event.closed_at or event.merged_at)
        return found

    async def _subscribers(self, repo: str) -> list[tuple[ChannelConfig, list[str]]]:
        channels = [c for c in self.config.channels if c.follows(repo)]
        found = []
        for channel in channels:
            try:
                topics = await asyncio.to_thread(followed_topics, channel, self.store)
            except StoreUnavailable as exc:
                log.warning("subscriptions of %s unreadable, configured topics only: %s",
                            channel.key, exc)
                topics = list(channel.topics)
            found.append((channel, topics))
        return found

    async def announce(self, repo: str, event: PullRequest) -> NoticeResult:
        """Notify every channel following a topic of the merged PR, once per channel.

        A failed post is reported in `failed` and its claim released, so the next
        redelivery or poll retries it; the other channels are notified regardless. A
        notice another process holds unfinished is reported in `waiting`.
        """
        result = NoticeResult()
        name = self._repo_name(repo)
        if name is None or event.state != "merged":
            return result
        subscribers = await self._subscribers(name)
        if not any(topics for _, topics in subscribers):
            return result
        pull = await self._full_pull(name, event)
        recorded = pull.reviews is not None
        answers: dict[str, PullAnswer] = {}
        for channel, topics in subscribers:
            if channel.lang not in answers:
                answer = self.digests.answer(pull, name, channel.lang, recorded)
                answers[channel.lang] = msgspec.structs.replace(answer, notes=())
            answer = answers[channel.lang]
            followed = {topic.lower() for topic in topics}
            matched = [topic for topic in answer.topics if topic.lower() in followed]
            if (not matched or not self.sender.can_send(channel)
                    or self.digests.left_out(pull, name, channel)):
                continue
            first = (*matched, *(t for t in answer.topics if t not in matched))
            reply = Reply(kind="pull", lang=channel.lang, mode=NOTICE_MODE,
                          pull=msgspec.structs.replace(answer, topics=first),
                          topics=tuple(matched), params=(("author", pull.author or ""),
                                                         *channel.pull_scope(name)))
            muted = await self._muted(channel, name, pull.number)
            if muted is not False:
                outcome = "muted" if muted else "failed"
            elif channel.notice_batch_minutes and self.batches is not None:
                outcome = await self._batch(name, pull, channel, reply)
            else:
                outcome = await self._send_once(name, pull, channel, reply)
            {"sent": result.notified, "failed": result.failed, "batched": result.batched,
             "waiting": result.waiting, "muted": result.muted,
             "held": result.held}.get(outcome, []).append(channel.key)
        return result

    async def muted(self, channel: ChannelConfig) -> bool:
        """Whether the channel's notices are muted now; raises `StoreUnavailable`."""
        return await self.mutes.get(channel.key) is not None

    async def _muted(self, channel: ChannelConfig, repo: str, number: int) -> bool | None:
        """Whether the notice of `repo#number` is dropped for `channel`, muted; None when
        the mute cannot be read (the notice fails, to be tried again)."""
        try:
            muted = await self.muted(channel)
        except StoreUnavailable as exc:
            log.warning("mute of %s unreadable; notice of %s#%s not sent: %s", channel.key,
                        repo, number, exc.reason)
            return None
        if muted:
            log.info("notice of %s#%s to %s dropped: notices muted", repo, number,
                     channel.key)
        return muted

    async def post(self, channel: ChannelConfig, reply: Reply, *, key: str,
                   in_doubt_since: datetime | None = None) -> list[str]:
        """Post a notice (or a batch of them) now: under the digest message posted this
        week when the channel wants threads and there is one, else - also when that
        message is gone - in the channel, once. `in_doubt_since`: a replica that died
        began posting it then, so it is first looked for where it would be."""
        parent = await self.threads.parent(channel, self.clock.now())
        if in_doubt_since is not None:
            found = await self._arrived(channel, reply, key, in_doubt_since, parent)
            if found is not None:
                return found
        if parent is not None:
            try:
                return await self.sender.send(channel, reply, thread=parent, key=key)
            except ThreadGone:
                log.info("digest message %s of %s is gone; notice posted in the channel",
                         parent, channel.key)
        return await self.sender.send(channel, reply, key=key)

    async def _arrived(self, channel: ChannelConfig, reply: Reply, key: str,
                       since: datetime, parent: str | None) -> list[str] | None:
        """The message ids of notice `key` when the platform shows it arrived, under
        the digest message or (its fallback) in the channel; None when it cannot tell."""
        for thread in ((parent, None) if parent is not None else (None,)):
            try:
                found = await self.sender.complete(channel, reply, key=key, since=since,
                                                   thread=thread)
            except Exception as exc:  # unknown: sending again is the fallback
                log.warning("could not check whether notice %s reached %s: %s", key,
                            channel.key, exc)
                return None
            if found:
                log.warning("notice %s to %s was left in doubt by a replica that stopped "
                            "but had arrived; recorded, not sent again", key, channel.key)
                return found
        return None

    async def _batch(self, repo: str, pull: PullRequest, channel: ChannelConfig,
                     reply: Reply) -> str:
        """Put the notice in the channel's batch, once per PR; "failed" when Redis is
        away (the next redelivery or poll tries again)."""
        assert self.batches is not None
        item = BatchItem(repo=repo, number=pull.number, merged_at=pull.merged_at, reply=reply)
        try:
            if await self.claims.get(Keys.notice(repo, pull.number, channel.key)) is not None:
                return "seen"  # announced on its own before the channel batched
            added = await self.batches.add(
                channel.key, item, now=self.clock.now(),
                window_seconds=channel.notice_batch_minutes * 60.0,
                marker_ttl_seconds=self.notice_ttl_seconds)
        except StoreUnavailable as exc:
            log.warning("notice of %s#%s not batched for %s: %s", repo, pull.number,
                        channel.key, exc.reason)
            return "failed"
        return "batched" if added else "seen"

    async def _send_once(self, repo: str, pull: PullRequest, channel: ChannelConfig,
                         reply: Reply) -> str:
        number = pull.number
        claim = Keys.notice(repo, number, channel.key)
        begun = await self.claims.try_begin(claim, self.notice_ttl_seconds)
        if begun is Held.ELSEWHERE:
            return "waiting"  # another process began it and may have died: not done
        if not isinstance(begun, Begun):
            return "seen"
        try:
            await self.post(channel, reply, key=claim, in_doubt_since=begun.in_doubt_since)
        except Exception as exc:  # one platform failing must not stop the other channels
            if held_in_doubt(exc):
                log.warning("notice of %s#%s to %s may or may not have arrived (%s); not "
                            "sent again, as the platform's in_doubt says", repo, number,
                            channel.key, exc)
                await self.claims.finish(claim, self.notice_ttl_seconds)
                self.events.emit(NoticePosted(channel.platform, ok=False))
                return "held"
            log.warning("notice of %s#%s to %s failed: %s", repo, number, channel.key, exc)
            await self.claims.release(claim)
            self.events.emit(NoticePosted(channel.platform, ok=False))
            return "failed"
        await self.claims.finish(claim, self.notice_ttl_seconds)
        self.events.emit(NoticePosted(channel.platform, ok=True))
        return "sent"


@dataclass
class NoticeResult:
    """Channel keys notified by one `announce`, those whose post failed, those whose
    notice waits in a batch, those whose notice another process began and may not
    finish (it may have died): the merge is not done until that is known - and those
    whose send may or may not have arrived, held as their platform's `in_doubt` says.
    `muted`: the channels that muted their notices, for which it was dropped."""

    notified: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    batched: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    muted: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
