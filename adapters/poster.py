"""Digests and notices to the chat adapters: the scheduler's `Poster` and the merge
notifier's `NoticeSender` over the configured platforms."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from adapters.base import ChatAdapter, DeliveryError
from bot.config import ChannelConfig
from bot.models import Digest, Reply

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


class AdapterNotices:
    """Merged-PR notices through the chat adapters (`bot.delivery.notices.NoticeSender`)."""

    def __init__(self, adapters: Mapping[str, ChatAdapter]) -> None:
        self.adapters = adapters

    def can_send(self, channel: ChannelConfig) -> bool:
        return channel.platform in self.adapters

    async def send(self, channel: ChannelConfig, reply: Reply, *, thread: str | None = None,
                   key: str | None = None) -> list[str]:
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            raise DeliveryError(f"{channel.platform} is not configured")
        return await adapter.send_reply(channel.id, reply, thread=thread, idempotency_key=key)

    async def complete(self, channel: ChannelConfig, reply: Reply, *, key: str,
                       since: datetime, thread: str | None = None) -> list[str] | None:
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            return None
        found = await adapter.complete_reply(channel.id, reply, idempotency_key=key,
                                             since=since, thread=thread)
        return None if found is None else list(found)
