"""The finished week fetched in the hours before the posting minute, spread out.

Left to the posting minute, every repository's week would be asked of GitHub at once
(200 repositories at Monday 09:00) against one hour's points. Instead, once a week has
ended (and settled, `SETTLE`: late merges and search lag have reached it), each
channel's owed week is fetched at a moment of its own within the `prefetch_hours`
before the channel's next fire: the same moment on every replica (a hash of
repository and week), through the once-across-replicas fetch, into the cache, where
the post then finds it. A prefetch never waits for GitHub's points: short of them,
it is left to a later pass, and at worst to the post itself, which waits for the
refill (`SharedDigests`) and goes out late rather than never.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from croniter import croniter

from bot.config import ChannelConfig, Config, ConfigView
from bot.errors import SourceError, WeekError
from bot.github.budget import COUNTED_SHARE, Budget
from bot.github.plan import Fetch
from bot.store.cache import SETTLE
from bot.store.coordination import StoreUnavailable
from bot.week import shift_week, week_of, week_period, zone

log = logging.getLogger(__name__)

SPREAD_SHARE = 0.8
"""Prefetches land in the first 80% of their window: the rest is margin before the post."""
RETRY_AFTER = timedelta(minutes=10)
"""A prefetch that failed is tried again this much later (the post fetches anyway)."""
_FAILURES: tuple[type[Exception], ...] = (SourceError, WeekError, StoreUnavailable)


@dataclass(frozen=True)
class Prefetch:
    """A week to fetch ahead (`at`), before the first post that needs it (`fire_at`);
    `counted`: needed only for the trends of the week after it, so read for its counts."""

    repo: str
    week: str
    at: datetime
    fire_at: datetime
    counted: bool = False
    credential: str = ""  # the GitHub credential planned for it (`github.plan`)


def _share(repo: str, week: str) -> float:
    """A fraction in [0, 1) that every replica computes alike for (repo, week)."""
    digest = hashlib.sha256(f"{repo}\n{week}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _next_fire(channel: ChannelConfig, now: datetime) -> datetime | None:
    try:
        fired: datetime = croniter(channel.schedule, now.astimezone(zone(channel.timezone))
                                   ).get_next(datetime)
    except Exception:  # a cron croniter cannot walk: `due_runs` logs it every pass
        return None
    return fired


def prefetch_plan(config: Config, channels: Iterable[ChannelConfig], now: datetime,
                  window: timedelta, *, trends: bool = True,
                  points: Budget | None = None) -> list[Prefetch]:
    """Weeks to fetch ahead for the fires in (now, now + window], earliest moment first.

    A channel firing within the window owes the ISO week before its fire's (as
    `due_runs` reckons); that week is fetched, with the week before it for the trends
    (read for its counts only), at a moment spread over [week end + settle, fire)
    trimmed to the window. With `points` (GitHub's, one credential or a pool) each
    fetch is then given its credential, and a later moment where the credentials'
    hours would be spent beyond their margin (`bot.github.plan`).
    """
    plan: dict[tuple[str, str], Prefetch] = {}
    fires: dict[tuple[str, str], datetime | None] = {}
    for channel in channels:
        if not channel.weekly:
            continue
        key = (channel.schedule, channel.timezone)
        if key not in fires:
            fires[key] = _next_fire(channel, now)
        fire = fires[key]
        if fire is None or fire - now > window:
            continue
        week = shift_week(week_of(fire, channel.timezone), -1)
        weeks = [(week, False), (shift_week(week, -1), True)] if trends else [(week, False)]
        # A channel of several repositories posts one digest of them all: each is fetched.
        for repo in channel.repositories:
            start = max(fire - window, week_period(week, config.repo(repo).timezone).until
                        + SETTLE)
            if start >= fire:
                continue  # the week settles too close to the post: the post fetches it
            for wanted, counted in weeks:
                at = start + (fire - start) * SPREAD_SHARE * _share(repo, wanted)
                known = plan.get((repo, wanted))
                if known is not None:  # the earliest moment; in full if any post needs it so
                    at, counted = min(at, known.at), counted and known.counted
                plan[(repo, wanted)] = Prefetch(repo, wanted, at, fire, counted)
    ordered = sorted(plan.values(), key=lambda p: (p.at, p.repo, p.week))
    if points is None:
        return ordered
    placed = points.pace([Fetch(p.repo, p.at, _points(points, p)) for p in ordered])
    paced = [p if where is None else replace(p, at=where.at, credential=where.lane)
             for p, where in zip(ordered, placed, strict=True)]
    return sorted(paced, key=lambda p: (p.at, p.repo, p.week))


def _points(points: Budget, item: Prefetch) -> int:
    """What the fetch is taken to cost: the week's last cost, a third of it when read
    for its counts only."""
    week = points.week_cost(item.repo)
    return -(-week // COUNTED_SHARE) if item.counted else week


class WeekFetcher(Protocol):
    async def prefetch(self, repo: str, week: str, *, counted: bool = False) -> bool:
        """Fetch the week into the cache unless it holds it fresh (for its counts only
        when `counted`); whether GitHub was asked."""
        ...


class Prefetcher:
    """Runs the plan, one week at a time, in the background of the scheduler's passes."""

    def __init__(self, config: ConfigView, fetcher: WeekFetcher, *, window: timedelta,
                 budget: Budget | None = None, trends: bool = True) -> None:
        self.settings = config
        self.fetcher = fetcher
        self.window = window
        self.budget = budget
        self.trends = trends
        self.done: dict[tuple[str, str], datetime] = {}
        self.retry_at: dict[tuple[str, str], datetime] = {}
        self.fetched = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def config(self) -> Config:
        """The config in force (a reload or a chat's settings change it)."""
        return self.settings.current

    def start(self, now: datetime) -> None:
        """Begin the prefetches whose moment has come, unless some are still running."""
        if self.window <= timedelta(0) or (self._task is not None and not self._task.done()):
            return
        # Forget what was done for posts already made.
        self.done = {key: fire for key, fire in self.done.items() if fire > now}
        due = [p for p in prefetch_plan(self.config, self.config.channels, now, self.window,
                                        trends=self.trends, points=self.budget)
               if p.at <= now and (p.repo, p.week) not in self.done
               and self.retry_at.get((p.repo, p.week), now) <= now]
        if due:
            self._task = asyncio.ensure_future(self._run(due, now))

    async def idle(self) -> None:
        """Wait for the prefetches running now (tests; a graceful stop)."""
        if self._task is not None:
            await asyncio.wait([self._task])

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self, due: list[Prefetch], now: datetime) -> None:
        for item in due:
            key = (item.repo, item.week)
            budget = self.budget.for_repo(item.repo) if self.budget is not None else None
            if budget is not None and budget.short_of(budget.week_cost(item.repo)):
                log.info("prefetch: GitHub has %s point(s) left until its refill; %s %s "
                         "and %d more wait for a later pass", budget.remaining, item.repo,
                         item.week, len(due) - 1 - due.index(item))
                return
            try:
                if await self.fetcher.prefetch(item.repo, item.week, counted=item.counted):
                    self.fetched += 1
                    log.info("prefetch: %s %s fetched ahead of its post at %s", item.repo,
                             item.week, f"{item.fire_at:%Y-%m-%d %H:%M %Z}")
            except _FAILURES as exc:
                log.warning("prefetch: %s %s failed (%s); tried again in %d min, and the "
                            "post fetches it anyway", item.repo, item.week, exc,
                            RETRY_AFTER.seconds // 60)
                self.retry_at[key] = now + RETRY_AFTER
                continue
            self.done[key] = item.fire_at
            self.retry_at.pop(key, None)
