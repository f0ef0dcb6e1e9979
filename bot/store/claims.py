"""Set-once keys with expiry: one primitive for every "only the first one does it".

An inbound chat delivery is answered once across the platform's retries (`first`), a
GitHub delivery is handled once, a merged-PR notice goes to a channel once, one
replica polls a repository per interval. In Redis the claims are shared by replicas;
without Redis a bounded memory in this process gives the same answers to one replica.
"""

from __future__ import annotations

import time

import redis.asyncio as aioredis

from bot.store.keys import KEY_PREFIX, Keys

SEEN_TTL_SECONDS = 24 * 3600
"""How long an inbound delivery is remembered: platforms retry within minutes."""

LOCAL_CLAIMS = 100_000
"""How many claims the in-process memory keeps before forgetting the oldest."""


class Claims:
    """`claim` is True for the first caller only, until the TTL passes; `release` undoes
    it when the claimed work failed, so a later attempt may try again. `get`/`put`/
    `forget` keep small values (a poller's ETag) under the same names."""

    def __init__(self, client: aioredis.Redis | None, *, prefix: str = KEY_PREFIX,
                 seen_ttl_seconds: int = SEEN_TTL_SECONDS) -> None:
        self.client = client
        self.keys = Keys(prefix)
        self.seen_ttl_seconds = seen_ttl_seconds
        self._local: dict[str, float] = {}
        self._values: dict[str, str] = {}

    async def first(self, platform: str, delivery: str) -> bool:
        """Mark an inbound delivery seen; False when it was seen before."""
        return await self.claim(Keys.seen(platform, delivery), self.seen_ttl_seconds)

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        name = self.keys.claim(key)
        if self.client is None:
            now = time.monotonic()
            if self._local.get(name, 0.0) > now:
                return False
            self._local.pop(name, None)
            self._local[name] = now + ttl_seconds
            if len(self._local) > LOCAL_CLAIMS:
                self._local.pop(next(iter(self._local)))
            return True
        return bool(await self.client.set(name, b"1", nx=True,
                                          px=max(int(ttl_seconds * 1000), 1)))

    async def release(self, key: str) -> None:
        name = self.keys.claim(key)
        if self.client is None:
            self._local.pop(name, None)
            return
        await self.client.delete(name)

    async def get(self, key: str) -> str | None:
        name = self.keys.claim(key)
        if self.client is None:
            return self._values.get(name)
        raw = await self.client.get(name)
        return raw.decode() if isinstance(raw, bytes) else raw

    async def put(self, key: str, value: str, *, only_new: bool = False) -> None:
        name = self.keys.claim(key)
        if self.client is None:
            if not (only_new and name in self._values):
                self._values[name] = value
            return
        await self.client.set(name, value.encode(), nx=only_new)

    async def forget(self, key: str) -> None:
        name = self.keys.claim(key)
        if self.client is None:
            self._values.pop(name, None)
            return
        await self.client.delete(name)
