"""Merged-PR notices from GitHub's closed-PR list: where no webhook is set up, the way
merges are found; with a webhook, a slow reconciliation pass that announces the merges
no delivery brought (GitHub does not redeliver a failed delivery by itself).

What it costs GitHub: an unchanged list is one conditional request answered 304 (free
of the rate limit); a changed one is a page or a few, and one fetch per merge that is
new - a merge already announced, by a poll or a webhook delivery, is recognised by its
claim (`bot.delivery.merges`) before anything is fetched. A rate limit stops every
poll of this token, on every replica, until its window ends.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Protocol

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, ConfigView
from bot.delivery.merges import MERGE_MEMORY, MergeAnnouncer
from bot.delivery.notices import MergeNotifier, NoticeResult
from bot.delivery.periodic import run_every
from bot.errors import SourceError
from bot.github.closed import ClosedPage
from bot.github.policy import RateLimitReached
from bot.store.claims import Begun, Claims, Held
from bot.store.coordination import StoreUnavailable
from bot.store.keys import Keys

log = logging.getLogger(__name__)


class ClosedLister(Protocol):
    def closed(self, repo: str, *, etag: str | None = None, page: int = 1) -> ClosedPage: ...

    def close(self) -> None: ...


class MergePoller:
    """Every `interval_seconds`, asks GitHub which closed PRs changed and announces the
    merges not announced yet, `concurrency` repositories at a time.

    Per repository, Redis keeps the ETag of the last answer (so an unchanged list
    costs one 304), the time the repository was first watched (merges before it are
    history, not news) and the time of the last check (how far back to page). A lock
    per repository and interval lets one replica poll while the others skip.
    `announced` and `known` count the merges announced and those recognised as
    announced before (no fetch); `paused` the repositories a rate limit left unpolled.
    """

    def __init__(
        self,
        config: ConfigView,
        lister: ClosedLister,
        claims: Claims,
        notifier: MergeNotifier,
        *,
        interval_seconds: float | None = None,
        concurrency: int | None = None,
        clock: Clock = SYSTEM_CLOCK,
        max_pages: int = 5,
        overlap: timedelta = timedelta(minutes=10),
    ) -> None:
        self.settings = config
        self.lister = lister
        self.claims = claims
        self.merges = MergeAnnouncer(claims, notifier)
        self.interval_seconds = (interval_seconds if interval_seconds is not None
                                 else config.current.github.poll_minutes * 60.0)
        self.concurrency = max(concurrency or config.current.github.poll_concurrency, 1)
        self.clock = clock
        self.max_pages = max_pages
        self.overlap = overlap
        self.polls = 0
        self.announced = 0
        self.known = 0
        self.paused = 0
        self.paused_until: datetime | None = None
        # The list requests' own threads: the loop's default pool (a few threads on a
        # small machine) would bound the polls below `concurrency`.
        self._threads = ThreadPoolExecutor(max_workers=self.concurrency,
                                           thread_name_prefix="prdigest-poll")

    @property
    def config(self) -> Config:
        """The config in force: its repositories with channels are the ones polled."""
        return self.settings.current

    def close(self) -> None:
        """Release the lister's connections and the request threads."""
        self.lister.close()
        self._threads.shutdown(wait=False)

    async def _list(self, repo: str, *, etag: str | None = None, page: int = 1
                    ) -> ClosedPage:
        call = functools.partial(self.lister.closed, repo, etag=etag, page=page)
        return await asyncio.get_running_loop().run_in_executor(self._threads, call)

    def repos(self) -> list[str]:
        """Repositories with at least one channel: the only ones whose merges matter."""
        with_channels = {name for c in self.config.channels for name in c.repositories}
        return [name for name in self.config.repos if name in with_channels]

    async def poll_once(self) -> NoticeResult:
        """One round over every repository, `concurrency` at a time; a failing
        repository does not stop the rest, a rate limit stops them all (until its
        window ends), a Redis failure ends the round (raised once, at its end)."""
        total = NoticeResult()
        repos = self.repos()
        if await self._is_paused():
            self.paused += len(repos)
            self.polls += 1
            return total
        gate = asyncio.Semaphore(self.concurrency)
        broken: list[BaseException] = []

        async def one(repo: str) -> None:
            async with gate:
                if broken:
                    return
                if self._paused_here():
                    self.paused += 1
                    return
                try:
                    result = await self.poll_repo(repo)
                except RateLimitReached as exc:
                    await self._pause(repo, exc)
                    return
                except SourceError as exc:
                    log.warning("polling %s failed: %s", repo, exc)
                    return
                except StoreUnavailable as exc:
                    broken.append(exc)
                    return
                total.notified += result.notified
                total.failed += result.failed
                total.waiting += result.waiting
                total.muted += result.muted

        await asyncio.gather(*(one(repo) for repo in repos))
        self.polls += 1
        if broken:
            raise broken[0]
        return total

    async def poll_repo(self, repo: str) -> NoticeResult:
        result = NoticeResult()
        if not await self.claims.claim(Keys.poll_lock(repo), self.interval_seconds * 0.8):
            return result  # another replica polled this interval
        now = self.clock.now()
        # GitHub's times are whole seconds: a merge in the second polling began is news.
        await self.claims.put(Keys.poll_state(repo, "since"),
                              now.replace(microsecond=0).isoformat(), only_new=True)
        since = _parse_time(await self.claims.get(Keys.poll_state(repo, "since"))) or now
        checked = _parse_time(await self.claims.get(Keys.poll_state(repo, "checked"))) or since
        etag = await self.claims.get(Keys.poll_state(repo, "etag"))
        first = await self._list(repo, etag=etag)
        if first.not_modified:
            await self.claims.put(Keys.poll_state(repo, "checked"), now.isoformat())
            return result
        pulls = list(first.pulls)
        merges = list(first.merged)
        page = first
        number = 1
        horizon = checked - self.overlap
        while (page.full and number < self.max_pages and pulls
               and (pulls[-1].updated_at or now) >= horizon):
            number += 1
            page = await self._list(repo, page=number)
            pulls += page.pulls
            merges += page.merged
        # Older merges are history (before the repository was watched) or beyond what
        # the merge claims remember: never fetched again, whatever updates them.
        oldest = max(since, now - MERGE_MEMORY)
        news = sorted((m for m in merges if m.pull.merged_at is not None
                       and m.pull.merged_at >= oldest),
                      key=lambda m: (m.pull.merged_at, m.pull.number))
        for merge in news:
            begun = await self.merges.claim(merge)
            if begun is Held.ELSEWHERE:  # another process is at it, or died at it
                result.waiting.append(self.merges.key(merge))
                continue
            if not isinstance(begun, Begun):
                self.known += 1
                continue
            done = await self.merges.announce_claimed(merge)
            self.announced += 1
            result.notified += done.notified
            result.failed += done.failed
            result.waiting += done.waiting
            result.muted += done.muted
        if result.failed or result.waiting or first.etag is None:
            # Keep asking in full until every notice went out.
            await self.claims.forget(Keys.poll_state(repo, "etag"))
        else:
            await self.claims.put(Keys.poll_state(repo, "etag"), first.etag)
        await self.claims.put(Keys.poll_state(repo, "checked"), now.isoformat())
        return result

    async def _is_paused(self) -> bool:
        """Whether a rate limit this process or another replica met is still on."""
        return self._paused_here() or await self.claims.get(Keys.poll_pause()) is not None

    def _paused_here(self) -> bool:
        return self.paused_until is not None and self.clock.now() < self.paused_until

    async def _pause(self, repo: str, limit: RateLimitReached) -> None:
        """Stop polling (here and, through Redis, on every replica) for the window."""
        seconds = max(limit.wait_seconds, 1.0)
        until = self.clock.now() + timedelta(seconds=seconds)
        if not self._paused_here():  # one line per window, not one per request in flight
            log.warning("merge poller paused for %.0f s: polling %s met %s", seconds, repo,
                        limit)
        if self.paused_until is None or until > self.paused_until:
            self.paused_until = until
        self.paused += 1
        try:
            await self.claims.claim(Keys.poll_pause(), seconds)
        except StoreUnavailable as exc:  # this replica stays paused all the same
            log.warning("merge poller pause not shared with other replicas: %s",
                        exc.reason)

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Poll until `stop` is set; errors are logged and the next round goes on."""
        await run_every(self.clock, self.interval_seconds, stop, self._round, log,
                        "merge poll failed")

    async def _round(self) -> None:
        """One round; Redis away is one line (the round is simply tried again later)."""
        try:
            await self.poll_once()
        except StoreUnavailable as exc:
            log.warning("merge poll skipped: Redis unavailable (%s); the next round, in "
                        "%.0f s, tries again", exc.reason, self.interval_seconds)


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None
