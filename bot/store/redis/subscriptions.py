"""Chat's topic subscriptions in Redis (`bot.store.subscriptions.SubscriptionStore`): one
set of topic names per channel, shared by the replicas and kept across restarts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis

from bot.store.keys import KEY_PREFIX, Keys
from bot.store.redis.client import unavailable_as_store_error


class RedisSubscriptionStore:
    """`SubscriptionStore` over Redis: one set of topic names per channel.

    Synchronous (redis-py), as the protocol is: handlers call it in a worker thread.
    Redis away is `StoreUnavailable`.
    """

    def __init__(self, client: redis.Redis, *, prefix: str = KEY_PREFIX) -> None:
        self.client = client
        self.keys = Keys(prefix)

    def _key(self, channel_key: str) -> str:
        return self.keys.subscriptions(channel_key)

    def topics(self, channel_key: str) -> set[str]:
        with unavailable_as_store_error():
            members: Iterable[Any] = self.client.smembers(self._key(channel_key))
        return {m.decode() if isinstance(m, bytes) else str(m) for m in members}

    def add(self, channel_key: str, topics: Iterable[str]) -> None:
        names = [name for name in topics if name]
        if names:
            with unavailable_as_store_error():
                self.client.sadd(self._key(channel_key), *names)

    def remove(self, channel_key: str, topics: Iterable[str]) -> None:
        names = [name for name in topics if name]
        if names:
            with unavailable_as_store_error():
                self.client.srem(self._key(channel_key), *names)
