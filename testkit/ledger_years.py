"""A year of weekly posts through the real scheduler, and what it leaves in Redis: the
keys a test or a benchmark checks for an expiry (nothing may grow without bound)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.clock import HeldClock
from bot.snapshot import read_snapshot
from bot.store.cache import CachedSource
from bot.store.coordination import StoreUnavailable
from bot.store.redis.cache import Cache
from bot.store.redis.client import sync_client
from bot.store.redis.coordination import RedisCoordination
from testkit.redis_topologies import all_keys
from testkit.schedule import (
    SHANGHAI_MONDAY_9,
    CountingSource,
    FakePlatforms,
    FakePoster,
    WeekOnly,
    make_config,
    scheduler,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PLATFORMS = ("slack", "telegram", "feishu")


async def post_weeks(redis_url: str, *, weeks: int, channels: int,
                     concurrency: int = 32) -> Counter[str]:
    """Post `weeks` Mondays in a row to `channels` channels (one replica, the cache on,
    fake platforms); the results' statuses, counted."""
    config = make_config([
        {"platform": PLATFORMS[n % 3], "id": f"c{n}", "repo": "acme/lumen",
         "timezone": "Asia/Shanghai", "schedule": "0 9 * * MON", "lang": "en", "topics": []}
        for n in range(channels)])
    clock = HeldClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    source = CachedSource(WeekOnly(CountingSource(read_snapshot(EXAMPLES / "snapshot.json"))),
                          Cache(sync_client(redis_url)), config)
    port = RedisCoordination.from_url(redis_url)
    counts: Counter[str] = Counter()
    try:
        replica = scheduler(config, source, port, FakePoster(platforms, "r1"), clock,
                            lock_seconds=30.0, concurrency=concurrency)
        for _ in range(weeks):
            for attempt in range(5):  # a pass Redis failed is run again, as run_forever does
                try:
                    counts.update(r.status for r in await replica.tick())
                    break
                except StoreUnavailable:
                    if attempt == 4:
                        raise
                    await asyncio.sleep(1.0)
            clock.advance(timedelta(weeks=1))
            platforms.delivered.clear()
    finally:
        await port.close()
        if source.cache is not None:
            source.cache.close()
    return counts


def keys_without_expiry(redis_url: str) -> list[str]:
    """Every key (on every node) that has no TTL: it would stay for ever."""
    client: Any = sync_client(redis_url)
    try:
        found = []
        for key in all_keys(client):
            if client.ttl(key) == -1:
                found.append(key.decode() if isinstance(key, bytes) else str(key))
        return sorted(found)
    finally:
        client.close()


def run(redis_url: str, *, weeks: int, channels: int) -> Counter[str]:
    return asyncio.run(post_weeks(redis_url, weeks=weeks, channels=channels))
