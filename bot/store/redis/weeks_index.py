"""Which weeks of a repository the cache holds data for, without SCAN.

A sorted set per repository (`Keys.report_weeks`): each week scored with when its
data expires. Whoever stores a week's data (a PR window, a report, a scheduled
digest) adds the week; readers take the members whose score is still ahead, and
writers trim the rest. SCAN would do on one server, but on a Redis Cluster it sees
only one node's keys.
"""

from __future__ import annotations

import time
from typing import Any

import redis
import redis.asyncio as aioredis

from bot.store.keys import Keys

INDEX_TTL_SECONDS = 400 * 24 * 3600
"""The index itself lives as long as the longest-kept entry could (the ledger's year);
members are trimmed by their own expiry."""


def _commands(pipe: Any, keys: Keys, repo: str, week: str, ttl: int) -> None:
    now = time.time()  # real epoch seconds: the scores track Redis's own key expiries
    key = keys.report_weeks(repo)
    pipe.zadd(key, {week: now + ttl}, gt=True)
    pipe.zremrangebyscore(key, "-inf", now)
    pipe.expire(key, INDEX_TTL_SECONDS)


def note_week(client: redis.Redis, keys: Keys, repo: str, week: str, ttl: int) -> None:
    """Record that `week` of `repo` has data for `ttl` seconds (sync clients)."""
    with client.pipeline(transaction=False) as pipe:
        _commands(pipe, keys, repo, week, ttl)
        pipe.execute()


async def note_week_async(client: aioredis.Redis, keys: Keys, repo: str, week: str,
                          ttl: int) -> None:
    """`note_week` for asyncio clients."""
    async with client.pipeline(transaction=False) as pipe:
        _commands(pipe, keys, repo, week, ttl)
        await pipe.execute()


async def weeks_held_async(client: aioredis.Redis, keys: Keys, repo: str) -> set[str]:
    """The weeks of `repo` whose data has not expired yet."""
    members = await client.zrangebyscore(keys.report_weeks(repo), time.time(), "+inf")
    return {m.decode() if isinstance(m, bytes) else str(m) for m in members}
