"""Merged-PR notices where no GitHub webhook is set up: poll the closed PRs, announce
the merges not announced yet."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from bot.config import Config
from bot.delivery.notices import MergeNotifier, NoticeResult
from bot.delivery.periodic import run_every
from bot.errors import SourceError
from bot.github.closed import ClosedPage
from bot.store.claims import Claims
from bot.store.keys import Keys

log = logging.getLogger(__name__)


class ClosedLister(Protocol):
    def closed(self, repo: str, *, etag: str | None = None, page: int = 1) -> ClosedPage: ...


def utc_now() -> datetime:
    return datetime.now(UTC)


class MergePoller:
    """Every `interval_seconds`, asks GitHub which closed PRs changed and announces the
    merges it has not announced yet.

    Per repository, Redis keeps the ETag of the last answer (so an unchanged list
    costs one 304), the time the repository was first watched (merges before it are
    history, not news) and the time of the last check (how far back to page). A lock
    per repository and interval lets one replica poll while the others skip.
    """

    def __init__(
        self,
        config: Config,
        lister: ClosedLister,
        claims: Claims,
        notifier: MergeNotifier,
        *,
        interval_seconds: float | None = None,
        now: Callable[[], datetime] = utc_now,
        max_pages: int = 5,
        overlap: timedelta = timedelta(minutes=10),
    ) -> None:
        self.config = config
        self.lister = lister
        self.claims = claims
        self.notifier = notifier
        self.interval_seconds = (interval_seconds if interval_seconds is not None
                                 else config.github.poll_minutes * 60.0)
        self.now = now
        self.max_pages = max_pages
        self.overlap = overlap
        self.polls = 0

    def repos(self) -> list[str]:
        """Repositories with at least one channel: the only ones whose merges matter."""
        with_channels = {name for c in self.config.channels for name in c.repositories}
        return [name for name in self.config.repos if name in with_channels]

    async def poll_once(self) -> NoticeResult:
        """One round over every repository; a failing repository does not stop the rest."""
        total = NoticeResult()
        for repo in self.repos():
            try:
                result = await self.poll_repo(repo)
            except SourceError as exc:
                log.warning("polling %s failed: %s", repo, exc)
                continue
            total.notified += result.notified
            total.failed += result.failed
        self.polls += 1
        return total

    async def poll_repo(self, repo: str) -> NoticeResult:
        result = NoticeResult()
        if not await self.claims.claim(Keys.poll_lock(repo), self.interval_seconds * 0.8):
            return result  # another replica polled this interval
        now = self.now()
        await self.claims.put(Keys.poll_state(repo, "since"), now.isoformat(), only_new=True)
        since = _parse_time(await self.claims.get(Keys.poll_state(repo, "since"))) or now
        checked = _parse_time(await self.claims.get(Keys.poll_state(repo, "checked"))) or since
        etag = await self.claims.get(Keys.poll_state(repo, "etag"))
        first = await asyncio.to_thread(self.lister.closed, repo, etag=etag, page=1)
        if first.not_modified:
            await self.claims.put(Keys.poll_state(repo, "checked"), now.isoformat())
            return result
        pulls = list(first.pulls)
        page = first
        number = 1
        horizon = checked - self.overlap
        while (page.full and number < self.max_pages and pulls
               and (pulls[-1].updated_at or now) >= horizon):
            number += 1
            page = await asyncio.to_thread(self.lister.closed, repo, page=number)
            pulls += page.pulls
        merged = sorted((p for p in pulls if p.state == "merged" and p.merged_at is not None
                         and p.merged_at >= since), key=lambda p: (p.merged_at, p.number))
        for pull in merged:
            done = await self.notifier.announce(repo, pull)
            result.notified += done.notified
            result.failed += done.failed
        if result.failed or first.etag is None:
            # Keep asking in full until every notice went out.
            await self.claims.forget(Keys.poll_state(repo, "etag"))
        else:
            await self.claims.put(Keys.poll_state(repo, "etag"), first.etag)
        await self.claims.put(Keys.poll_state(repo, "checked"), now.isoformat())
        return result

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Poll until `stop` is set; errors are logged and the next round goes on."""
        await run_every(self.interval_seconds, stop, self.poll_once, log, "merge poll failed")


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None
