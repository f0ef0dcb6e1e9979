"""The notice a channel gets when a PR on its topics merges.

When a PR merges - told by the GitHub webhook, or found by the merge poller where no
webhook is set up - `MergeNotifier` sends each channel of that repository whose topics
the PR touches one short notice (title, topics, risk flag, link), once: a claim in Redis
per (PR, channel) makes sure of it, whatever replica, redelivery or poll sees the merge
again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from bot.config import ChannelConfig, Config
from bot.digests import Digests
from bot.errors import SourceError
from bot.models import PullAnswer, PullRequest, Reply
from bot.source import ForgetsPulls, Source
from bot.store.claims import Claims
from bot.store.client import REDIS_ERRORS
from bot.store.keys import Keys
from bot.store.subscriptions import TopicStore, followed_topics

log = logging.getLogger(__name__)

NOTICE_TTL_SECONDS = 90 * 24 * 3600
"""How long a sent notice is remembered: far longer than any redelivery or poll window."""

NOTICE_MODE = "merged"
"""`Reply.mode` of a merged-PR notice: a `pull` reply whose `topics` are the channel's
topics the PR touched and whose `author` param is who wrote it."""


class NoticeSender(Protocol):
    """Where notices go: the chat adapters, by the channel's platform."""

    def can_send(self, channel: ChannelConfig) -> bool:
        """False when the channel's platform is not configured (no notice is claimed)."""
        ...

    async def send(self, channel: ChannelConfig, reply: Reply) -> list[str]:
        """Post the notice; raises when the platform did not take it."""
        ...


class MergeNotifier:
    """Sends one notice per (merged PR, subscribed channel), ever.

    The PR is read again through the source (files give path topics, reviews the
    risks); when that fails, the event's own fields are used.
    """

    def __init__(
        self,
        config: Config,
        source: Source | None,
        store: TopicStore | None,
        claims: Claims,
        sender: NoticeSender,
        *,
        on_sent: Callable[[str, bool], None] | None = None,
        notice_ttl_seconds: int = NOTICE_TTL_SECONDS,
        digests: Digests | None = None,
    ) -> None:
        self.config = config
        self.source = source
        self.store = store
        self.claims = claims
        self.sender = sender
        self.on_sent = on_sent
        self.notice_ttl_seconds = notice_ttl_seconds
        self.digests = digests or Digests(config, source)

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
            except REDIS_ERRORS as exc:
                log.warning("subscriptions of %s unreadable, configured topics only: %s",
                            channel.key, exc)
                topics = list(channel.topics)
            found.append((channel, topics))
        return found

    async def announce(self, repo: str, event: PullRequest) -> NoticeResult:
        """Notify every channel following a topic of the merged PR, once per channel.

        A failed post is reported in `failed` and its claim released, so the next
        redelivery or poll retries it; the other channels are notified regardless.
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
            outcome = await self._send_once(name, pull.number, channel, reply)
            if outcome == "sent":
                result.notified.append(channel.key)
            elif outcome == "failed":
                result.failed.append(channel.key)
        return result

    async def _send_once(self, repo: str, number: int, channel: ChannelConfig, reply: Reply
                         ) -> str:
        claim = Keys.notice(repo, number, channel.key)
        if not await self.claims.begin(claim, self.notice_ttl_seconds):
            return "seen"
        try:
            await self.sender.send(channel, reply)
        except Exception as exc:  # one platform failing must not stop the other channels
            log.warning("notice of %s#%s to %s failed: %s", repo, number, channel.key, exc)
            await self.claims.release(claim)
            if self.on_sent is not None:
                self.on_sent(channel.platform, False)
            return "failed"
        await self.claims.finish(claim, self.notice_ttl_seconds)
        if self.on_sent is not None:
            self.on_sent(channel.platform, True)
        return "sent"


@dataclass
class NoticeResult:
    """Channel keys notified by one `announce`, and those whose post failed."""

    notified: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
