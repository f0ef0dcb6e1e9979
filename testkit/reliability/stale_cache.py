"""A repository's cached week, and the week before as kept for its trends, made stale:
what a GitHub outage finds once their freshness has run out."""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from bot.store.redis.cache import Cache

STALE_MINUTES = 31
"""How long ago the stale copies say they were fetched."""


def age_cached_weeks(cache: Cache, repo: str, week: str, week_before: str,
                     tz: str, now: datetime) -> None:
    """Both copies fetched `STALE_MINUTES` before `now` (the service's clock) and fresh
    until a minute before it; each must be cached already (an AssertionError if not)."""
    gone = now - timedelta(minutes=1)
    fetched = gone - timedelta(minutes=STALE_MINUTES - 1)
    entry = cache.get_week(repo, week, tz)
    assert entry is not None, f"{repo} {week} is not cached"
    cache.put_week(repo, week, tz, msgspec.structs.replace(
        entry, fetched_at=fetched, fresh_until=gone), 3600)
    trends = cache.trends()
    counted = trends.get(repo, week_before, tz)
    assert counted is not None, f"{repo} {week_before} is not kept for the trends"
    trends.put(repo, week_before, tz, msgspec.structs.replace(
        counted, fetched_at=fetched, fresh_until=gone), 3600)
