"""The parts of the service that count for `/metrics`: the cache's lookups, each
platform's answers, each digest posted."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import redis

from bot.chat.handler import CommandHandler
from bot.chat.inbound import Asker
from bot.config import ChannelConfig, Config
from bot.delivery.poster import Poster
from bot.models import Command, Digest, PullRequest, Reply
from bot.store.redis_cache import Cache
from bot.web.metrics import Metrics


class MeteredCache(Cache):
    """The Redis cache, counting each lookup as a hit or a miss in `/metrics`."""

    def __init__(self, client: redis.Redis, metrics: Metrics) -> None:
        super().__init__(client)
        self.metrics = metrics

    def _count(self, kind: str, hit: bool) -> None:
        self.metrics.cache_lookup(kind, "hit" if hit else "miss")

    def get_week(self, repo: str, week: str, tz: str) -> Any:
        entry = super().get_week(repo, week, tz)
        self._count("week", entry is not None)
        return entry

    def get_pulls(self, repo: str, refs: Sequence[tuple[int, str]]) -> dict[int, PullRequest]:
        found = super().get_pulls(repo, refs)
        for _ in range(len(found)):
            self._count("pull", True)
        for _ in range(len(refs) - len(found)):
            self._count("pull", False)
        return found

    def get_pointer(self, repo: str, number: int) -> Any:
        pointer = super().get_pointer(repo, number)
        self._count("pointer", pointer is not None)
        return pointer

    def get_report(self, repo: str, week: str, lang: str) -> bytes | None:
        raw = super().get_report(repo, week, lang)
        self._count("digest", raw is not None)
        return raw


class MeteredHandler:
    """The command handler as one platform sees it: counts every answer by platform and
    outcome."""

    def __init__(self, handler: CommandHandler, metrics: Metrics, platform: str,
                 config: Config) -> None:
        self.handler = handler
        self.metrics = metrics
        self.platform = platform
        self.config = config

    async def handle(self, command: Command, *, channel: ChannelConfig | None,
                     user: str | None = None, asker: Asker | None = None) -> Reply:
        started = time.perf_counter()
        reply = await self.handler.handle(command, channel=channel, user=user, asker=asker)
        self.metrics.command(self.platform, command.kind, reply, time.perf_counter() - started)
        return reply

    async def chat_channel(self, chat: str) -> ChannelConfig | None:
        return await self.handler.chat_channel(chat)


class MeteredPoster:
    """The scheduler's poster: counts posts by platform and outcome."""

    def __init__(self, inner: Poster, metrics: Metrics, config: Config) -> None:
        self.inner = inner
        self.metrics = metrics
        self.config = config

    async def post_digest(self, channel: ChannelConfig, digest: Digest, *, delivery_key: str
                          ) -> list[str]:
        try:
            ids = await self.inner.post_digest(channel, digest, delivery_key=delivery_key)
        except Exception:
            self.metrics.digest_posted(channel.platform, "failed")
            raise
        self.metrics.digest_posted(channel.platform, "ok")
        return ids

    def idempotency_window(self, channel: ChannelConfig) -> timedelta | None:
        return self.inner.idempotency_window(channel)

    async def complete_delivery(self, channel: ChannelConfig, digest: Digest, *,
                                delivery_key: str, since: datetime) -> list[str] | None:
        """Whether a delivery in doubt arrived, when the platform can tell (Slack)."""
        return await self.inner.complete_delivery(channel, digest, delivery_key=delivery_key,
                                                  since=since)
