"""What a report page would cost of GitHub's points, and the hourly allowance all report
pages share (`server.report_points_per_hour`).

Anyone may open a report page, and a page of a week nobody asked for yet is fetched from
GitHub: the per-client rate alone lets a crowd of addresses spend the points the weekly
posts need. A page that the cache holds - its finished digest, or both weeks it is built
from - asks GitHub nothing and is always served; any other is charged what its weeks
cost last time, and beyond the allowance gets a short 503 page saying when to come back.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from bot.models import Lang
from bot.store.redis.cache import Cache
from bot.web.services import Services
from bot.week import shift_week


class OverBudget(Exception):
    """The page would ask GitHub for more points than the allowance has left now."""

    def __init__(self, wait_seconds: int) -> None:
        super().__init__(f"report pages' GitHub allowance spent; {wait_seconds} s to wait")
        self.wait_seconds = wait_seconds


def _uncached_cost(services: Services, repo: str, week: str, lang: Lang) -> int:
    """Points the page's build would ask GitHub for: none when its digest or both of its
    weeks (the week, and the one before for the trends: in full, or its counts as the
    trends keep them) are cached fresh. Looked up on a plain cache: these looks are not
    page lookups for `/metrics`."""
    github = services.process.github
    if github is None:
        return 0  # snapshot files or another source: GitHub is not asked
    weeks = (week, shift_week(week, -1))
    cache = services.cache
    if cache is None:
        return len(weeks) * github.budget.week_cost(repo)
    if cache.get_report(repo, week, lang) is not None:
        return 0
    tz = services.config.repo(repo).timezone
    now = services.process.clock.now()
    trends = cache.trends()
    missing = [w for w in weeks if not _held_fresh(cache, repo, w, tz, now)
               and not (w != week and trends.fresh(repo, w, tz, now))]
    return len(missing) * github.budget.week_cost(repo)


def _held_fresh(cache: Cache, repo: str, week: str, tz: str, now: datetime) -> bool:
    """Whether the week is held in full and fresh (building on it asks GitHub nothing)."""
    entry = cache.get_week(repo, week, tz)
    return entry is not None and now < entry.fresh_until


async def charge_page(services: Services, repo: str, week: str, lang: Lang) -> None:
    """Spend what the page will cost from the shared allowance; `OverBudget` when it
    cannot now. A page that costs nothing is never refused."""
    allowance = services.report_points
    if allowance is None:
        return
    cost = await asyncio.to_thread(_uncached_cost, services, repo, week, lang)
    if cost:
        wait = allowance.take(cost)
        if wait:
            raise OverBudget(wait)
