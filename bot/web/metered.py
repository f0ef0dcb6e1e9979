"""The parts of the service that count for `/metrics`: each platform's answers, each
digest posted."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from bot.chat.handler import CommandHandler
from bot.config import ChannelConfig, Config
from bot.delivery.poster import Poster
from bot.models import Command, Digest, Reply
from bot.web.metrics import Metrics


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
                     user: str | None = None) -> Reply:
        started = time.perf_counter()
        reply = await self.handler.handle(command, channel=channel, user=user)
        self.metrics.command(self.platform, command.kind, reply, time.perf_counter() - started)
        return reply


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
