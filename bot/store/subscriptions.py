"""Topic subscriptions: a channel follows its configured topics plus the ones it
subscribed to from chat - kept in Redis (`bot.store.redis.subscriptions`: one set per
channel, so they survive restarts and are shared by replicas), in memory in tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from bot.config import ChannelConfig


class TopicStore(Protocol):
    """What reading a channel's subscribed topics needs."""

    def topics(self, channel_key: str) -> set[str]: ...


class SubscriptionStore(Protocol):
    """Topics a channel subscribed to from chat, by channel key (`slack:C0123`).

    A channel follows its configured topics (`channels[].topics`) plus what this store
    holds; configured topics are not stored here and cannot be removed from chat.
    """

    def topics(self, channel_key: str) -> set[str]:
        """The topics added from chat, empty for a channel that never subscribed."""
        ...

    def add(self, channel_key: str, topics: Iterable[str]) -> None:
        """Subscribe; adding a topic twice is no change."""
        ...

    def remove(self, channel_key: str, topics: Iterable[str]) -> None:
        """Unsubscribe; removing a topic that is not there is no change."""
        ...


def followed_topics(channel: ChannelConfig, store: TopicStore | None) -> list[str]:
    """The channel's configured topics, then those added from chat (sorted)."""
    names = list(channel.topics)
    if store is not None:
        names += sorted(name for name in store.topics(channel.key) if name not in names)
    return names
