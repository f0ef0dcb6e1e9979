"""Which weeks a repository's report index lists: the recent ones, and every older week
the cache holds data for."""

from __future__ import annotations

import logging
import re
from datetime import datetime, timedelta

import redis

from bot.config import Config
from bot.errors import WeekError
from bot.render.html import ReportWeek
from bot.store.keys import KEY_PREFIX, Keys
from bot.week import current_week, parse_week, past_week, shift_week, week_period

log = logging.getLogger(__name__)

RECENT_WEEKS = 8
"""How many ISO weeks up to the current one the index always lists."""

_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


def _glob_escape(text: str) -> str:
    return _GLOB_SPECIAL.sub(r"\\\1", text)


def _week_in_key(key: bytes | str, prefix: str) -> str | None:
    text = key.decode() if isinstance(key, bytes) else key
    rest = text[len(prefix):]
    week = rest.split(":", 1)[0]
    return week if re.fullmatch(r"\d{4}-W\d{2}", week) else None


def cached_weeks(client: redis.Redis | None, repo: str, *, prefix: str = KEY_PREFIX
                 ) -> tuple[set[str], set[str]]:
    """(weeks whose PR windows the cache holds, weeks with a cached digest: a report
    page's or a scheduled post's).

    Read with SCAN, never KEYS, so a large Redis is not blocked; a Redis failure gives
    empty sets (the index still lists the recent weeks).
    """
    if client is None:
        return set(), set()
    keys = Keys(prefix)
    report_start, weekly_start = keys.digest_starts(repo)
    starts = ((0, keys.week_start(repo)), (1, report_start), (1, weekly_start))
    found: tuple[set[str], set[str]] = (set(), set())
    try:
        for index, start in starts:
            for key in client.scan_iter(match=_glob_escape(start) + "*", count=500):
                week = _week_in_key(key, start)
                if week is not None:
                    found[index].add(week)
    except redis.RedisError as exc:
        log.warning("cannot list cached weeks of %s: %s", repo, exc)
        return set(), set()
    return found


def report_weeks(config: Config, repo: str, client: redis.Redis | None, now: datetime, *,
                 recent: int = RECENT_WEEKS) -> list[ReportWeek]:
    """The weeks the index lists, newest first: the last `recent` ISO weeks (in the
    repository's time zone) and every older week the cache holds data for."""
    tz = config.repo(repo).timezone
    this_week = current_week(now, tz)
    weeks = {shift_week(this_week, -offset) for offset in range(recent)}
    windows, digests = cached_weeks(client, repo)
    weeks |= {w for w in windows | digests if _valid_past(w, now, tz)}
    listed = []
    for week in sorted(weeks, key=parse_week, reverse=True):
        period = week_period(week, tz)
        listed.append(ReportWeek(
            week=week,
            since=period.since.strftime("%Y-%m-%d"),
            until=(period.until - timedelta(days=1)).strftime("%Y-%m-%d"),
            cached=week in windows or week in digests,
            current=week == this_week,
        ))
    return listed


def _valid_past(week: str, now: datetime, tz: str) -> bool:
    try:
        past_week(week, now, tz)
    except WeekError:
        return False
    return True


def check_week(config: Config, repo: str, week: str, now: datetime) -> str | None:
    """The week in canonical form when a report can exist for it, else None (404)."""
    try:
        return past_week(week, now, config.repo(repo).timezone)
    except WeekError:
        return None
