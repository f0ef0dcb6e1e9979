"""Topic subscriptions in Redis: a channel follows its configured topics plus the ones
it subscribed to from chat (one Redis set per channel, so they survive restarts and are
shared by replicas)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Protocol

import redis

from bot.config import ChannelConfig
from bot.store.keys import KEY_PREFIX, Keys

log = logging.getLogger(__name__)


class RedisSubscriptionStore:
    """`SubscriptionStore` over Redis: one set of topic names per channel.

    Synchronous (redis-py), as the protocol is: handlers call it in a worker thread.
    """

    def __init__(self, client: redis.Redis, *, prefix: str = KEY_PREFIX) -> None:
        self.client = client
        self.keys = Keys(prefix)

    def _key(self, channel_key: str) -> str:
        return self.keys.subscriptions(channel_key)

    def topics(self, channel_key: str) -> set[str]:
        members: Iterable[Any] = self.client.smembers(self._key(channel_key))
        return {m.decode() if isinstance(m, bytes) else str(m) for m in members}

    def add(self, channel_key: str, topics: Iterable[str]) -> None:
        names = [name for name in topics if name]
        if names:
            self.client.sadd(self._key(channel_key), *names)

    def remove(self, channel_key: str, topics: Iterable[str]) -> None:
        names = [name for name in topics if name]
        if names:
            self.client.srem(self._key(channel_key), *names)


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
