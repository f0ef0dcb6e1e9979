"""Redis between the GitHub source and the engine: `CachedSource` reads through the
cache's entries (`bot.store.redis.cache`, which lists what is kept).

In front of Redis, each process keeps the PRs it served most recently while they are
fresh, for at most a minute (`CachedSource.held_pull`): a chat question about a PR asked
again is answered from memory, without a thread hop or a Redis round trip. A PR GitHub
reports changed (`forget_pull`, on a merge event) is dropped here and its pointer in
Redis, so other replicas fetch it again once their minute is up.

A fresh week is served without asking GitHub; a stale one is refreshed by asking only
what changed since its last fetch (`GitHubSource.fetch_changes`). Entries outlive their
freshness: when GitHub fails, a stale copy is served, flagged with its age. A Redis
failure is logged and taken as a miss: the bot keeps working, uncached.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from cachetools import LRUCache

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, ConfigView
from bot.errors import SourceError
from bot.events import CacheLookup, Events
from bot.models import PullRequest, Snapshot
from bot.source import WeekData
from bot.store.redis.cache import Cache, CachedPointer, WeekEntry, cache_from_env, stamp
from bot.store.trend_weeks import CountsWeeks, read_trends
from bot.week import belongs_to_week, week_period

__all__ = ["CachedSource", "WeekData"]

log = logging.getLogger(__name__)

# A week counts as current until an hour after it ends: late merges and search-index
# lag still reach it before it is frozen for the long TTL.
SETTLE = timedelta(hours=1)
# PRs held in memory per process (a PR is a few kilobytes decoded), each for at most
# this long: a PR another replica learns has changed (a merge event drops its pointer in
# Redis) is seen here within that time.
HELD_PULLS = 2048
HELD_SECONDS = 60
# Changes are asked for from a little before the last fetch, to cover the delay
# between an update on GitHub and its appearance in search results.
SEARCH_LAG = timedelta(minutes=5)


def live_source(config: Config) -> CachedSource:
    """GitHub behind the cache the environment names (no cache when it names none)."""
    from bot.github.source import GitHubSource

    return CachedSource(GitHubSource(config), cache_from_env(config), config)


class WeekSource(Protocol):
    def fetch_week(self, repo: str, week: str) -> Snapshot: ...

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None: ...


@runtime_checkable
class IncrementalSource(Protocol):
    """A source that can say what changed (GitHubSource); others are refetched whole."""

    def fetch_changes(
        self, repo: str, week: str, *, since: datetime, recheck: Sequence[int] = ()
    ) -> Any: ...

    def fetch_pulls(self, repo: str, numbers: Sequence[int]) -> list[PullRequest]: ...


def _snapshot(repo: str, pulls: Iterable[PullRequest], fetched_at: datetime | None) -> Snapshot:
    by_number = {p.number: p for p in pulls}
    return Snapshot(repository=repo, fetched_at=fetched_at,
                    pulls=tuple(by_number[n] for n in sorted(by_number)))


class CachedSource:
    """The source behind the cache: what the engine, handlers and scheduler call.

    `last` tells how the latest `fetch_week` was served: "uncached", "cold", "warm",
    "changed" or "stale". `clock` tells what is fresh.
    """

    def __init__(self, source: WeekSource, cache: Cache | None, config: ConfigView, *,
                 held_pulls: int = HELD_PULLS,
                 events: Events | None = None,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.source = source
        self.clock = clock
        self.events = events or Events()
        self.cache = cache
        self.settings = config
        self.trends = cache.trends() if cache is not None else None
        self.last = ""
        # (repo, number) -> (PR, fresh until); read on the event loop, written from
        # worker threads, hence the lock.
        self._held: LRUCache[tuple[str, int], tuple[PullRequest, datetime]] = LRUCache(
            maxsize=held_pulls)
        self._held_lock = threading.Lock()

    @property
    def config(self) -> Config:
        """The config in force (its repositories' time zones, the cache's TTLs)."""
        return self.settings.current

    def _ttls(self, until: datetime, now: datetime) -> tuple[int, int]:
        """(freshness, Redis expiry) in seconds for a week ending at `until`."""
        settings = self.config.cache
        current = now < until + SETTLE
        fresh = settings.current_week_ttl_seconds if current else settings.past_week_ttl_seconds
        return fresh, max(fresh + settings.past_week_ttl_seconds, 1)

    def fetch_week(self, repo: str, week: str) -> WeekData:
        """The week's PRs: cached when fresh, refreshed by changes, stale when GitHub fails.

        `age_seconds` is the age of the data when it comes from the cache.
        """
        now = self.clock.now()
        if self.cache is None:
            self.last = "uncached"
            return WeekData(snapshot=self.source.fetch_week(repo, week))
        tz = self.config.repo(repo).timezone
        period = week_period(week, tz)
        entry = self.cache.get_week(repo, week, tz)
        cached: dict[int, PullRequest] = {}
        missing: list[int] = []
        if entry is not None:
            cached = self.cache.get_pulls(repo, entry.pulls)
            missing = [n for n, _ in entry.pulls if n not in cached]
        incremental = isinstance(self.source, IncrementalSource)
        if entry is not None and now < entry.fresh_until and (not missing or incremental):
            if missing:
                assert isinstance(self.source, IncrementalSource)
                cached.update(
                    (p.number, p) for p in self.source.fetch_pulls(repo, missing)
                )
                self.cache.put_pulls(repo, cached.values(), self._ttls(period.until, now)[1])
            self.last = "warm"
            age = (now - entry.fetched_at).total_seconds()
            return WeekData(snapshot=_snapshot(repo, cached.values(), entry.fetched_at),
                            age_seconds=age)
        try:
            if entry is not None and incremental:
                pulls, fetched_at = self._refresh(repo, week, entry, cached, missing)
                self.last = "changed"
            else:
                snapshot = self.source.fetch_week(repo, week)
                pulls, fetched_at = list(snapshot.pulls), snapshot.fetched_at or now
                self.last = "cold"
        except SourceError as exc:
            if entry is None or missing:
                raise
            age = (now - entry.fetched_at).total_seconds()
            log.warning("GitHub failed (%s); serving %s %s cached %.0f s ago",
                        exc, repo, week, age)
            self.last = "stale"
            return WeekData(snapshot=_snapshot(repo, cached.values(), entry.fetched_at),
                            stale=True, age_seconds=age)
        kept = [p for p in pulls if belongs_to_week(p, period)]
        self._store(repo, week, tz, period.until, kept, cached, fetched_at, now)
        return WeekData(snapshot=_snapshot(repo, kept, fetched_at))

    def _refresh(
        self, repo: str, week: str, entry: WeekEntry, cached: dict[int, PullRequest],
        missing: list[int],
    ) -> tuple[list[PullRequest], datetime]:
        """Ask GitHub only for what changed since the entry was fetched."""
        source = self.source
        assert isinstance(source, IncrementalSource)
        tz = self.config.repo(repo).timezone
        period = week_period(week, tz)
        # Merged is final; open and closed PRs may leave the week (merged later,
        # reopened), which a search for the week cannot show, so their state is asked.
        recheck = [n for n, p in cached.items() if p.state != "merged"]
        changes = source.fetch_changes(repo, week, since=entry.fetched_at - SEARCH_LAG,
                                       recheck=recheck)
        result = dict(cached)
        returned = set()
        for pull in changes.pulls:
            result[pull.number] = pull
            returned.add(pull.number)
        refetch = list(missing)
        for head in changes.heads:
            old = cached.get(head.number)
            if head.number in returned or (old and old.updated_at == head.updated_at):
                continue
            if belongs_to_week(head, period):
                refetch.append(head.number)  # changed, but not yet in search results
            else:
                result.pop(head.number, None)
        for pull in source.fetch_pulls(repo, refetch) if refetch else []:
            result[pull.number] = pull
        return list(result.values()), changes.fetched_at

    def _store(
        self, repo: str, week: str, tz: str, until: datetime, pulls: list[PullRequest],
        cached: dict[int, PullRequest], fetched_at: datetime, now: datetime,
    ) -> None:
        assert self.cache is not None
        fresh, keep = self._ttls(until, now)
        refs = tuple((p.number, stamp(p.updated_at)) for p in pulls)
        unchanged = [p for p in pulls if cached.get(p.number) == p]
        self.cache.put_pulls(repo, [p for p in pulls if cached.get(p.number) != p], keep)
        self.cache.touch_pulls(
            repo, ((p.number, stamp(p.updated_at)) for p in unchanged), keep
        )
        entry = WeekEntry(fetched_at=fetched_at, fresh_until=now + timedelta(seconds=fresh),
                          pulls=refs)
        self.cache.put_week(repo, week, tz, entry, keep)

    def fetch_trend_week(self, repo: str, week: str) -> WeekData:
        """The week for the trends of the next: in full when held fresh (or the source
        reads nothing lighter), else its counts only (`bot.store.trend_weeks`)."""
        now = self.clock.now()
        if not isinstance(self.source, CountsWeeks) or self.holds_fresh(repo, week):
            return self.fetch_week(repo, week)
        tz = self.config.repo(repo).timezone
        ttls = self._ttls(week_period(week, tz).until, now)
        return read_trends(self.source, self.trends, repo, week, tz, ttls=ttls, now=now)

    def holds_trends_fresh(self, repo: str, week: str) -> bool | None:
        """Whether `fetch_trend_week` would ask GitHub nothing; None without a cache."""
        held = self.holds_fresh(repo, week)
        if held is not False or self.trends is None:
            return held
        return self.trends.fresh(repo, week, self.config.repo(repo).timezone,
                                 self.clock.now())

    def holds_fresh(self, repo: str, week: str) -> bool | None:
        """Whether the week's entry is fresh (a fetch would not ask GitHub for it);
        None without a cache. One Redis read."""
        if self.cache is None:
            return None
        entry = self.cache.get_week(repo, week, self.config.repo(repo).timezone)
        return entry is not None and self.clock.now() < entry.fresh_until

    def held_pull(self, repo: str, number: int) -> PullRequest | None:
        """The PR if this process holds a fresh copy; never does I/O, so the event
        loop may call it. None means: ask `fetch_pull`."""
        pull = self._held_copy(repo, number, self.clock.now())
        self.events.emit(CacheLookup("held-pull", pull is not None))
        return pull

    def _held_copy(self, repo: str, number: int, now: datetime) -> PullRequest | None:
        """An expired copy stays until overwritten or pushed out of the LRU."""
        with self._held_lock:
            held = self._held.get((repo, number))
        if held is None or now >= held[1]:
            return None
        return held[0]

    def _hold(self, repo: str, pull: PullRequest, fresh_until: datetime, now: datetime
              ) -> None:
        until = min(fresh_until, now + timedelta(seconds=HELD_SECONDS))
        with self._held_lock:
            self._held[(repo, pull.number)] = (pull, until)

    def forget_pull(self, repo: str, number: int) -> None:
        """GitHub says the PR changed (e.g. merged): this process drops its copy and
        Redis its pointer, so the next question fetches it again - here at once, on
        other replicas once their memory copy ends (`HELD_SECONDS`)."""
        with self._held_lock:
            self._held.pop((repo, number), None)
        if self.cache is not None:
            self.cache.drop_pointer(repo, number)

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        """One PR: cached while fresh (the current-week TTL), stale when GitHub fails."""
        now = self.clock.now()
        if self.cache is None:
            return self.source.fetch_pull(repo, number)
        held = self._held_copy(repo, number, now)
        if held is not None:
            return held
        pointer = self.cache.get_pointer(repo, number)
        cached = (self.cache.get_pulls(repo, [(number, pointer.updated_at)]).get(number)
                  if pointer else None)
        if pointer and cached and now < pointer.fresh_until:
            self._hold(repo, cached, pointer.fresh_until, now)
            return cached
        try:
            pull = self.source.fetch_pull(repo, number)
        except SourceError:
            if cached is None:
                raise
            return cached
        if pull is not None:
            settings = self.config.cache
            fresh = settings.current_week_ttl_seconds
            keep = max(fresh + settings.past_week_ttl_seconds, 1)
            fresh_until = now + timedelta(seconds=fresh)
            self.cache.put_pulls(repo, [pull], keep)
            self.cache.put_pointer(repo, number, CachedPointer(
                updated_at=stamp(pull.updated_at), fetched_at=now,
                fresh_until=fresh_until), keep)
            self._hold(repo, pull, fresh_until, now)
        return pull
