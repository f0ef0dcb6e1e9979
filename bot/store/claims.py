"""One question, one answer: platforms re-deliver events, Redis remembers what was seen."""

from __future__ import annotations

import redis.asyncio as aioredis

DEFAULT_TTL_SECONDS = 24 * 3600


class Deduper:
    """`first(platform, key)` is True once per key within the TTL, across replicas."""

    def __init__(self, client: aioredis.Redis | None, *, ttl_seconds: int = DEFAULT_TTL_SECONDS,
                 prefix: str = "prdigest:v1:seen") -> None:
        self._client = client
        self._ttl = ttl_seconds
        self._prefix = prefix
        self._local: dict[str, None] = {}

    async def first(self, platform: str, key: str) -> bool:
        """Mark the delivery seen; False when it was seen before.

        Without Redis, a bounded in-process memory gives the same answer for one replica.
        """
        name = f"{self._prefix}:{platform}:{key}"
        if self._client is None:
            if name in self._local:
                return False
            self._local[name] = None
            if len(self._local) > 100_000:
                self._local.pop(next(iter(self._local)))
            return True
        return bool(await self._client.set(name, b"1", nx=True, ex=self._ttl))
