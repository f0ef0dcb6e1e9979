"""Digests to the chat adapters: the scheduler's `Poster` over the configured platforms."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Protocol

from adapters.base import DeliveryError
from bot.config import ChannelConfig
from bot.models import Digest

# Feishu: "requests holding the same uuid send at most one message within 1 hour".
PLATFORM_DEDUPE_WINDOWS: dict[str, timedelta] = {"feishu": timedelta(hours=1)}


class DigestAdapter(Protocol):
    async def post_digest(self, channel_id: str, digest: Digest) -> list[str]: ...


def _accepts_keyword(function: Callable[..., object], name: str) -> bool:
    try:
        return name in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


class AdapterPoster:
    """Sends to the adapter of `channel.platform`.

    An adapter whose `post_digest` takes `idempotency_key` gets the delivery key (for
    Feishu it belongs, with a part suffix, in each message's `uuid`) and the
    platform's dedupe window then counts. Other adapters are called as
    `post_digest(channel_id, digest)` and treated as not deduplicating.
    """

    def __init__(self, adapters: Mapping[str, DigestAdapter]) -> None:
        self.adapters = dict(adapters)
        self._keyed = {platform: _accepts_keyword(adapter.post_digest, "idempotency_key")
                       for platform, adapter in self.adapters.items()}

    async def post_digest(
        self, channel: ChannelConfig, digest: Digest, *, delivery_key: str
    ) -> list[str]:
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            raise DeliveryError(f"{channel.platform} is not configured, so {channel.key} "
                                "cannot be posted to")
        if self._keyed[channel.platform]:
            post: Callable[..., object] = adapter.post_digest
            result = await post(channel.id, digest, idempotency_key=delivery_key)  # type: ignore[misc]
            return list(result)
        return await adapter.post_digest(channel.id, digest)

    def idempotency_window(self, channel: ChannelConfig) -> timedelta | None:
        if not self._keyed.get(channel.platform, False):
            return None
        return PLATFORM_DEDUPE_WINDOWS.get(channel.platform)

    async def complete_delivery(self, channel: ChannelConfig, digest: Digest, *,
                                delivery_key: str, since: datetime) -> list[str] | None:
        """The adapter's answer to "did this delivery arrive?" when it can give one
        (Slack, by message metadata); None otherwise."""
        adapter = self.adapters.get(channel.platform)
        complete = getattr(adapter, "complete_delivery", None)
        if complete is None:
            return None
        found = await complete(channel.id, digest, idempotency_key=delivery_key, since=since)
        return None if found is None else list(found)
