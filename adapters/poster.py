"""Digests to the chat adapters: the scheduler's `Poster` over the configured platforms."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from adapters.base import ChatAdapter, DeliveryError
from bot.config import ChannelConfig
from bot.models import Digest

# What a poster needs of an adapter: the one contract (`prdigest post` names it so).
DigestAdapter = ChatAdapter


class AdapterPoster:
    """Sends to the adapter of `channel.platform`.

    Every adapter gets the delivery key as its `idempotency_key` (Feishu puts it, with
    a part suffix, in each message's `uuid`; Slack in each part's metadata); how long
    the platform itself drops a re-send with that key is the adapter's declared
    `dedupe_window`.
    """

    def __init__(self, adapters: Mapping[str, ChatAdapter]) -> None:
        self.adapters = dict(adapters)

    def _adapter(self, channel: ChannelConfig) -> ChatAdapter:
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            raise DeliveryError(f"{channel.platform} is not configured, so {channel.key} "
                                "cannot be posted to")
        return adapter

    async def post_digest(
        self, channel: ChannelConfig, digest: Digest, *, delivery_key: str
    ) -> list[str]:
        adapter = self._adapter(channel)
        return list(await adapter.post_digest(channel.id, digest, idempotency_key=delivery_key))

    def idempotency_window(self, channel: ChannelConfig) -> timedelta | None:
        """How long a re-send of the same delivery posts nothing twice; None when the
        platform does not drop re-sends (or is not configured)."""
        adapter = self.adapters.get(channel.platform)
        return None if adapter is None else adapter.dedupe_window

    async def complete_delivery(self, channel: ChannelConfig, digest: Digest, *,
                                delivery_key: str, since: datetime) -> list[str] | None:
        """The adapter's answer to "did this delivery arrive?" (only Slack can tell, by
        message metadata); None when it cannot tell or nothing arrived."""
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            return None
        found = await adapter.complete_delivery(channel.id, digest,
                                                idempotency_key=delivery_key, since=since)
        return None if found is None else list(found)
