"""Weeks read only for the trends of the week after them, kept apart from full weeks.

A digest compares its topic counts with the week before. On a weekly run that week
is the cache's from a week ago; on the first run it is not there, and reading it in
full would double the run's GitHub points. It is read instead at the price of its
counts (`GitHubSource.fetch_trend_week`: title, body, labels and files of each PR) and
kept under its own key, never among the full records the `pr:` keys hold: a digest or
a question about that week itself still reads it in full. A full week held fresh
serves the trends as well.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

import msgspec

from bot.errors import SourceError
from bot.models import PullRequest, Snapshot
from bot.source import WeekData

log = logging.getLogger(__name__)


class TrendEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A week's PRs as read for the trends, when, and how long that counts as fresh."""

    fetched_at: datetime
    fresh_until: datetime
    pulls: tuple[PullRequest, ...]


class KeepsTrends(Protocol):
    """Where weeks read for the trends are kept (the cache's `trend-week:` entries)."""

    def get(self, repo: str, week: str, tz: str) -> TrendEntry | None: ...

    def put(self, repo: str, week: str, tz: str, entry: TrendEntry, ttl: int) -> None: ...


@runtime_checkable
class CountsWeeks(Protocol):
    """A source that can read a week at the price of its counts (GitHubSource)."""

    def fetch_counted_week(self, repo: str, week: str) -> Snapshot: ...


def read_trends(source: CountsWeeks, kept: KeepsTrends | None, repo: str, week: str, tz: str,
                *, ttls: tuple[int, int], now: datetime) -> WeekData:
    """The week's counts: kept while fresh, else read from GitHub and kept (`ttls`: how
    long fresh, how long in Redis); a kept copy when GitHub fails, flagged stale."""
    entry = kept.get(repo, week, tz) if kept is not None else None
    if entry is not None and now < entry.fresh_until:
        return WeekData(snapshot=Snapshot(repository=repo, fetched_at=entry.fetched_at,
                                          pulls=entry.pulls),
                        age_seconds=(now - entry.fetched_at).total_seconds())
    try:
        snapshot = source.fetch_counted_week(repo, week)
    except SourceError as exc:
        if entry is None:
            raise
        log.warning("GitHub failed (%s); the trends use %s %s as read before", exc, repo, week)
        return WeekData(snapshot=Snapshot(repository=repo, fetched_at=entry.fetched_at,
                                          pulls=entry.pulls),
                        stale=True, age_seconds=(now - entry.fetched_at).total_seconds())
    if kept is not None:
        fresh, keep = ttls
        kept.put(repo, week, tz, TrendEntry(
            fetched_at=snapshot.fetched_at or now, fresh_until=now + timedelta(seconds=fresh),
            pulls=snapshot.pulls), keep)
    return WeekData(snapshot=snapshot)
