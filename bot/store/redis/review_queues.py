"""The review queues' entries and fetch claims in Redis
(`bot.store.review_queues.ReviewQueueStore`): one key each, expiring by themselves."""

from __future__ import annotations

import uuid

import redis

from bot.store.redis.client import unavailable_as_store_error
from bot.store.redis.coordination import as_bytes


class RedisReviewQueueStore:
    """`ReviewQueueStore` over Redis. Synchronous (redis-py), as the protocol is: the
    handler calls it in a worker thread. Redis away is `StoreUnavailable`."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def get(self, key: str) -> bytes | None:
        with unavailable_as_store_error():
            return as_bytes(self.client.get(key))

    def claim(self, key: str, ttl_seconds: int) -> bool:
        with unavailable_as_store_error():
            return bool(self.client.set(key, uuid.uuid4().hex, nx=True, ex=ttl_seconds))

    def put(self, key: str, value: bytes, ttl_seconds: int) -> None:
        with unavailable_as_store_error():
            self.client.set(key, value, ex=ttl_seconds)
