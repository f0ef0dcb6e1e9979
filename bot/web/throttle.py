"""What anyone on the internet may cost the report pages: one build per (repository,
week, language) however many ask at once, a number of requests per minute each, and
GitHub points an hour all together."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from cachetools import TTLCache

from bot.clock import SYSTEM_CLOCK, Clock

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
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.capacity = float(per_minute)
        self.per_second = per_minute / RATE_WINDOW_SECONDS
        self.clock = clock
        self._buckets: TTLCache[str, tuple[float, float]] = TTLCache(
            maxsize=clients, ttl=RATE_WINDOW_SECONDS, timer=clock.monotonic)

    def wait_seconds(self, client: str) -> int:
        """Take one request from `client`'s bucket: 0 when it may go ahead, else the
        whole seconds until it may (for `Retry-After`)."""
        now = self.clock.monotonic()
        tokens, at = self._buckets.get(client, (self.capacity, now))
        tokens, wait = _take(min(self.capacity, tokens + (now - at) * self.per_second), 1,
                             self.capacity, self.per_second)
        self._buckets[client] = (tokens, now)
        return wait


class Allowance:
    """One bucket shared by everyone: `per_hour` units (GitHub points) at once, refilled
    at `per_hour` an hour. A cost larger than the whole bucket is let through when the
    bucket is full (it would otherwise never be), leaving it in debt."""

    def __init__(self, per_hour: int, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.capacity = float(per_hour)
        self.per_second = per_hour / 3600.0
        self.clock = clock
        self._tokens = self.capacity
        self._at = clock.monotonic()

    def take(self, cost: int) -> int:
        """Spend `cost`: 0 when it may, else the whole seconds until it may."""
        now = self.clock.monotonic()
        self._tokens = min(self.capacity, self._tokens + (now - self._at) * self.per_second)
        self._at = now
        self._tokens, wait = _take(self._tokens, cost, self.capacity, self.per_second)
        return wait


def _take(tokens: float, cost: float, capacity: float, per_second: float
          ) -> tuple[float, int]:
    """A token bucket's one decision: the tokens left and 0 when `cost` may be taken
    (`cost` capped at the bucket's size), else the tokens and the seconds to wait."""
    needed = min(cost, capacity)
    if tokens >= needed and needed > 0:
        return tokens - cost, 0
    if per_second <= 0:
        return tokens, 3600  # a bucket that never refills: ask again in an hour
    return tokens, max(1, math.ceil((needed - tokens) / per_second))
