"""What anyone on the internet may cost the report pages: one build per (repository,
week, language) however many ask at once, and a number of requests per minute each."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from cachetools import TTLCache

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

RATE_WINDOW_SECONDS = 60.0
CLIENTS_TRACKED = 10_000
"""Clients whose request counts are kept; beyond it the longest idle is forgotten."""


class SingleFlight(Generic[K, V]):
    """Concurrent callers with the same key share one run of the work: the first starts
    it, the others wait for its result (or its error). A caller that goes away (a
    closed browser tab) does not cancel the run the others wait for."""

    def __init__(self) -> None:
        self._running: dict[K, asyncio.Future[V]] = {}

    async def run(self, key: K, work: Callable[[], Awaitable[V]]) -> V:
        running = self._running.get(key)
        if running is None:
            running = asyncio.ensure_future(work())
            self._running[key] = running
            running.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(running)

    def _finished(self, key: K, done: asyncio.Future[V]) -> None:
        if self._running.get(key) is done:
            del self._running[key]
        if not done.cancelled():
            done.exception()  # retrieved, even when every caller left before the end

    def __len__(self) -> int:
        return len(self._running)


class ClientRate:
    """A token bucket per client: `per_minute` requests at once, refilled at
    `per_minute` a minute. A bucket idle for a minute is full again, so forgetting it
    then (the table's TTL) changes nothing."""

    def __init__(self, per_minute: int, *, clients: int = CLIENTS_TRACKED,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.per_second = per_minute / RATE_WINDOW_SECONDS
        self.clock = clock
        self._buckets: TTLCache[str, tuple[float, float]] = TTLCache(
            maxsize=clients, ttl=RATE_WINDOW_SECONDS, timer=clock)

    def wait_seconds(self, client: str) -> int:
        """Take one request from `client`'s bucket: 0 when it may go ahead, else the
        whole seconds until it may (for `Retry-After`)."""
        now = self.clock()
        tokens, at = self._buckets.get(client, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - at) * self.per_second)
        if tokens >= 1:
            self._buckets[client] = (tokens - 1, now)
            return 0
        self._buckets[client] = (tokens, now)
        return max(1, math.ceil((1 - tokens) / self.per_second))
