"""Weekly digests built once across replicas: a week is fetched once per (repository,
week) and a digest built once per (repository, week, language, focus topics).

The fetch runs under a mutex shared by the replicas (a lock of the coordination port)
and, through the cached source, the replicas that wait read the cached copy instead
of asking GitHub again; a finished digest is kept in the port's shared values for the
others. Within one replica, concurrent asks share one task.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

import msgspec

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ChannelConfig, ExcludeRule
from bot.digests import Digests
from bot.github.budget import Budget
from bot.models import Digest, Lang
from bot.source import KeepsWeeks, ReadsTrends, Source, WeekData
from bot.store.coordination import Coordination
from bot.store.locks import Lock

log = logging.getLogger(__name__)

MUTEX_PATIENCE_SECONDS = 600.0
"""How long a replica waits for another one's fetch or build before doing it itself."""
DIGEST_TTL_SECONDS = 8 * 24 * 3600
"""Finished weekly digests are kept a little longer than the catch-up window can reach."""
VARIANTS_KEPT = 1024
"""Digest tasks one replica remembers (most recently asked kept)."""

_Variant = tuple[tuple[str, ...], str, Lang, tuple[str, ...], ExcludeRule]
"""(repositories, week, language, focus topics, the channel's exclude rules): what makes
two digests differ."""

_decoder = msgspec.json.Decoder(Digest)
_encoder = msgspec.json.Encoder()


def _fingerprint(rule: ExcludeRule) -> str:
    """A short name for a channel's own exclude rules ("" without any)."""
    if not rule:
        return ""
    return "x" + hashlib.sha256(_encoder.encode(rule)).hexdigest()[:12]


class BuildCounts(Protocol):
    """Where the counts of reads and builds go (the scheduler's stats)."""

    source_reads: int
    digest_builds: int


class SharedDigests:
    """The scheduler's digests. `share` keeps built digests in `port` for the other
    replicas (off for digests built from a local snapshot file); `trends` reads the
    week before; `lock_seconds` is how long a dead holder's mutex lasts; `budget`
    (GitHub's points) makes a fetch the points left cannot cover wait for the refill."""

    def __init__(self, digests: Digests, source: Source, port: Coordination,
                 counts: BuildCounts, *, lock_seconds: float, share: bool = True,
                 trends: bool = True, log_prefix: str = "schedule",
                 budget: Budget | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        self.digests = digests
        self.source = source
        self.port = port
        self.keys = port.keys
        self.counts = counts
        self.lock_seconds = lock_seconds
        self.share = share
        self.trends = trends
        self.log_prefix = log_prefix
        self.budget = budget
        self.clock = clock
        self._digests: OrderedDict[_Variant, asyncio.Task[Digest]] = OrderedDict()
        self._weeks: dict[tuple[str, str], asyncio.Task[WeekData]] = {}
        self._trends: dict[tuple[str, str], asyncio.Task[WeekData]] = {}

    def end_pass(self) -> None:
        """Forget the weeks read this pass: the next pass reads them afresh."""
        self._weeks.clear()
        self._trends.clear()

    async def for_channel(self, channel: ChannelConfig, week: str, *, rebuild: bool = False
                          ) -> Digest:
        """The digest for the channel's (repositories, week, language, topics), built
        once per replica and shared between replicas, in the channel's chat form;
        `rebuild` builds it afresh. Each repository's week is fetched once, whichever
        channels follow it."""
        variant = (channel.repositories, week, channel.lang, await self.digests.focus(channel),
                   channel.exclude)
        task = self._digests.get(variant)
        if rebuild or task is None or (task.done() and (task.cancelled() or task.exception())):
            task = asyncio.ensure_future(self._shared(*variant, rebuild=rebuild))
            self._digests[variant] = task
            while len(self._digests) > VARIANTS_KEPT:
                self._digests.popitem(last=False)
        self._digests.move_to_end(variant)
        # One digest serves every chat form: the channel's is applied to its copy.
        return msgspec.structs.replace(await asyncio.shield(task), chat_form=channel.chat_form)

    async def _shared(self, repos: tuple[str, ...], week: str, lang: Lang,
                      topics: tuple[str, ...], exclude: ExcludeRule, *, rebuild: bool
                      ) -> Digest:
        if not self.share:
            return _decoder.decode(await self._build(repos, week, lang, topics, exclude))
        variant = _fingerprint(exclude)
        repo = ", ".join(repos)
        key = self.keys.weekly_digest(repo, week, lang, topics, variant)
        values = self.port.values
        raw = None if rebuild else await values.get(key)
        if raw is None:
            name = ":".join(["build", repo, week, lang, ",".join(topics),
                             *([variant] if variant else [])])
            async with self._mutex(name):
                raw = None if rebuild else await values.get(key)
                if raw is None:
                    raw = await self._build(repos, week, lang, topics, exclude)
                    await values.put(key, raw, DIGEST_TTL_SECONDS)
                    for name in repos:
                        await values.note_week(name, week, DIGEST_TTL_SECONDS)
        return _decoder.decode(raw)

    async def _build(self, repos: tuple[str, ...], week: str, lang: Lang,
                     topics: tuple[str, ...], exclude: ExcludeRule) -> bytes:
        digest = await self.digests.build_many(repos, week, lang, topics, fetch=self._week,
                                               trends=self.trends, link=True,
                                               trigger="schedule", exclude=(exclude,),
                                               fetch_trends=self._trend_week)
        self.counts.digest_builds += 1
        return _encoder.encode(digest)

    async def _week(self, repo: str, week: str) -> WeekData:
        """A week's data, fetched once per pass in this replica and, across replicas, one
        at a time: the first fetch fills the cache the others then read."""
        return await _once(self._weeks, (repo, week), lambda: self._fetch(repo, week))

    async def _trend_week(self, repo: str, week: str) -> WeekData:
        """The week before a digest's, for its trends: read for its counts where the
        source can, once per pass here and one replica at a time, as `_week` reads."""
        if not isinstance(self.source, ReadsTrends):
            return await self._week(repo, week)
        return await _once(self._trends, (repo, week), lambda: self._fetch_trends(repo, week))

    async def _fetch_trends(self, repo: str, week: str) -> WeekData:
        assert isinstance(self.source, ReadsTrends)
        await self._await_points(repo, week, counted=True)
        async with self._mutex(f"fetch-trends:{repo}:{week}"):
            self.counts.source_reads += 1
            return await asyncio.to_thread(self.source.fetch_trend_week, repo, week)

    async def prefetch(self, repo: str, week: str, *, counted: bool = False) -> bool:
        """Fetch the week into the cache ahead of its posts, unless the cache holds it
        fresh already; whether it was fetched. `counted`: for the trends only, so read
        for its counts where the source can. Without a cache there is nothing to fill."""
        if counted and isinstance(self.source, ReadsTrends):
            if await asyncio.to_thread(self.source.holds_trends_fresh, repo, week) is not False:
                return False
            await self._fetch_trends(repo, week)
            return True
        if not isinstance(self.source, KeepsWeeks):
            return False
        if await asyncio.to_thread(self.source.holds_fresh, repo, week) is not False:
            return False
        await self._fetch(repo, week)
        return True

    async def _await_points(self, repo: str, week: str, *, counted: bool = False) -> None:
        """When GitHub's points left are below what the repository's week cost last
        time, wait until they refill rather than fail: the posts go out late, never
        skipped. A week the cache holds fresh costs nothing and never waits."""
        budget = self.budget.for_repo(repo) if self.budget is not None else None
        if budget is None or not budget.short_of(need := budget.week_cost(repo)):
            return
        held = (self.source.holds_trends_fresh if counted and isinstance(self.source, ReadsTrends)
                else self.source.holds_fresh if isinstance(self.source, KeepsWeeks) else None)
        if held is not None and await asyncio.to_thread(held, repo, week) is True:
            return
        wait = budget.seconds_to_reset() + 1.0
        log.warning("%s: GitHub has %s point(s) left and %s %s needs about %d; waiting "
                    "%.0f s for the refill at %s, so its posts go out late", self.log_prefix,
                    budget.remaining, repo, week, need, wait,
                    f"{budget.reset_at:%H:%M:%S} UTC" if budget.reset_at else "?")
        await self.clock.sleep(wait)

    async def _fetch(self, repo: str, week: str) -> WeekData:
        await self._await_points(repo, week)
        async with self._mutex(f"fetch:{repo}:{week}"):
            self.counts.source_reads += 1
            return await asyncio.to_thread(self.source.fetch_week, repo, week)

    @contextlib.asynccontextmanager
    async def _mutex(self, name: str) -> AsyncIterator[None]:
        """Across replicas, one holder at a time. A live holder renews it, however long
        GitHub takes; a dead one's expires after `lock_seconds`. Waiting beyond
        `MUTEX_PATIENCE_SECONDS` goes ahead unlocked rather than never."""
        lock = Lock(self.port.locks, self.keys.mutex(name), ttl_seconds=self.lock_seconds,
                    clock=self.clock)
        if not await lock.acquire_waiting(MUTEX_PATIENCE_SECONDS, poll=0.02):
            log.warning("%s: %s stayed locked; going ahead without it", self.log_prefix, name)
            yield
            return
        try:
            async with lock.kept_alive():
                yield
        finally:
            await lock.release()


async def _once(tasks: dict[tuple[str, str], asyncio.Task[WeekData]], key: tuple[str, str],
                read: Callable[[], Awaitable[WeekData]]) -> WeekData:
    """`read()` once per key while it runs or has succeeded; again after it failed."""
    task = tasks.get(key)
    if task is None or (task.done() and (task.cancelled() or task.exception())):
        task = asyncio.ensure_future(read())
        tasks[key] = task
    return await asyncio.shield(task)
