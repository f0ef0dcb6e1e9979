"""The report pages: `/reports/{owner}/{repo}` lists the weeks, `/reports/{owner}/{repo}/{week}`
is one week's full report; unknown and private-without-key repositories get the same 404."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import get_args
from zoneinfo import ZoneInfo

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from bot.config import Config
from bot.errors import SourceError, UncoveredWeekError, WeekError
from bot.i18n import translator
from bot.links import key_allows, report_path, report_query
from bot.models import Digest, Lang, Period, Snapshot
from bot.render.html import (
    PageLinks,
    ReportWeek,
    render_error_page,
    render_index_page,
    render_report_page,
)
from bot.snapshot import data_time, require_week
from bot.source import SnapshotSource
from bot.store.coordination import Coordination, StoreUnavailable
from bot.web.page_budget import OverBudget, charge_page
from bot.web.services import Services, services_of
from bot.week import FIRST_YEAR, current_week, parse_week, past_week, shift_week, week_period

log = logging.getLogger(__name__)

PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
LANGS: tuple[Lang, ...] = get_args(Lang)


RECENT_WEEKS = 8
"""How many ISO weeks up to the current one the index always lists."""

async def cached_weeks(port: Coordination, repo: str) -> set[str]:
    """The weeks the cache holds data for (PR windows, report pages' and scheduled
    posts' digests), from the repository's weeks index - not SCAN, which on a Redis
    Cluster sees one node's keys. The store away gives an empty set (the index page
    still lists the recent weeks)."""
    try:
        return await port.values.weeks(repo)
    except StoreUnavailable as exc:
        log.warning("cannot list cached weeks of %s: %s", repo, exc)
        return set()


def report_weeks(config: Config, repo: str, held: set[str], now: datetime, *,
                 recent: int = RECENT_WEEKS, snapshot: Snapshot | None = None
                 ) -> list[ReportWeek]:
    """The weeks the index lists, newest first: the last `recent` ISO weeks (in the
    repository's time zone) and every older week the cache holds data for (`held`).
    With the `snapshot` a server reads instead of GitHub, each says whether the file
    holds it."""
    tz = config.repo(repo).timezone
    this_week = current_week(now, tz)
    weeks = {shift_week(this_week, -offset) for offset in range(recent)}
    weeks |= {w for w in held if _valid_past(w, now, tz)}
    ends = snapshot_end(snapshot, tz) if snapshot is not None else None
    listed = []
    for week in sorted(weeks, key=parse_week, reverse=True):
        period = week_period(week, tz)
        since = period.since.strftime("%Y-%m-%d")
        until = (period.until - timedelta(days=1)).strftime("%Y-%m-%d")
        listed.append(ReportWeek(
            week=week, since=since, until=until, cached=week in held,
            current=week == this_week,
            available=snapshot is None or _covers(snapshot, week, period),
            data_until=ends if ends is not None and since <= ends <= until else None,
        ))
    return listed


def snapshot_end(snapshot: Snapshot, tz: str) -> str | None:
    """The day (in `tz`) a snapshot's data ends: when it was fetched, else its last event."""
    moment = snapshot.fetched_at or data_time(snapshot)
    return None if moment is None else moment.astimezone(ZoneInfo(tz)).strftime("%Y-%m-%d")


def _covers(snapshot: Snapshot, week: str, period: Period) -> bool:
    try:
        require_week(snapshot, week, period)
    except UncoveredWeekError:
        return False
    return True


def served_snapshot(services: Services, repo: str) -> Snapshot | None:
    """The snapshot file the server reads `repo` from; None when it reads GitHub. A
    repository no file holds is served from an empty one: no week is available."""
    source = services.process.source
    if not isinstance(source, SnapshotSource):
        return None
    try:
        return source.snapshot_of(repo)
    except SourceError:
        return Snapshot(repository=repo, fetched_at=None, pulls=())


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


@dataclass(frozen=True)
class _PageRequest:
    repo: str
    lang: Lang
    key: str | None


def _default_lang(config: Config, repo: str) -> Lang:
    """The language of the repository's first channel, else Chinese."""
    return next((c.lang for c in config.channels if c.follows(repo)), "zh")


def _page_error(status: int, lang: Lang, message: str, services: Services, page: str,
                links: PageLinks | None = None) -> Response:
    services.metrics.report_page(page, status)
    headers = dict(PAGE_HEADERS, **{"Cache-Control": "no-store"})
    return HTMLResponse(render_error_page(status, lang, message, links), status_code=status,
                        headers=headers)


def _page_request(request: Request, services: Services, page: str
                  ) -> _PageRequest | Response:
    """The repository, language and key of a report request, or the error page.

    An unknown repository and a private one without a valid key get the same 404,
    so a page never tells whether a private repository exists.
    """
    config = services.config
    owner = request.path_params["owner"]
    name = request.path_params["repo"]
    asked = request.query_params.get("lang")
    key = request.query_params.get("key")
    named = f"{owner}/{name}"
    repo = next((r for r in config.repos if r.lower() == named.lower()), None)
    # The key is checked for every address, known or not: the time taken tells nothing.
    allowed = key_allows(services.report_secret, repo or named, key)
    if repo is not None and config.repo(repo).private and not allowed:
        repo = None
    # Until access is granted, nothing about the repository (not even the language of
    # its channels) shapes the answer.
    lang: Lang = _default_lang(config, repo) if repo else "en"
    if asked is not None:
        if asked not in LANGS:
            t = translator(lang)
            return _page_error(400, lang, t("Unknown language %(lang)s; use zh or en.",
                                            lang=asked[:20]), services, page)
        lang = asked
    if repo is None:
        t = translator(lang)
        return _page_error(404, lang, t("There is no report for this address."), services,
                           page)
    return _PageRequest(repo=repo, lang=lang, key=key if config.repo(repo).private else None)


def _cache_control(services: Services, repo: str) -> str:
    return "private, no-store" if services.config.repo(repo).private else "public, max-age=120"


def _language_links(asked: _PageRequest, week: str | None) -> dict[str, str]:
    path = report_path(asked.repo, week)
    return {lang: f"{path}{report_query(lang, asked.key)}" for lang in LANGS}


def _too_many(request: Request, services: Services, page: str) -> Response | None:
    """The 429 page when this client has asked for more pages than
    `server.report_requests_per_minute` allows; counted before anything else, so
    unknown addresses cost the same."""
    if services.report_rate is None:
        return None
    client = request.client.host if request.client else "unknown"
    wait = services.report_rate.wait_seconds(client)
    if not wait:
        return None
    asked = request.query_params.get("lang")
    lang: Lang = asked if asked in LANGS else "en"
    t = translator(lang)
    response = _page_error(429, lang, t("Too many requests; try again in %(seconds)s "
                                        "seconds.", seconds=wait), services, page)
    response.headers["Retry-After"] = str(wait)
    return response


async def report_index(request: Request) -> Response:
    services = services_of(request)
    refused = _too_many(request, services, "index")
    if refused is not None:
        return refused
    asked = _page_request(request, services, "index")
    if isinstance(asked, Response):
        return asked
    snapshot = served_snapshot(services, asked.repo)
    held = await cached_weeks(services.process.port, asked.repo)
    weeks = await asyncio.to_thread(report_weeks, services.config, asked.repo, held,
                                    services.process.clock.now(), snapshot=snapshot)
    query = report_query(asked.lang, asked.key)
    rows = [(w, f"{report_path(asked.repo, w.week)}{query}") for w in weeks]
    links = PageLinks(languages=_language_links(asked, None),
                      github=f"https://github.com/{asked.repo}")
    html = render_index_page(asked.repo, rows, asked.lang, links,
                             snapshots=snapshot is not None)
    services.metrics.report_page("index", 200)
    return HTMLResponse(html, headers=dict(PAGE_HEADERS, **{
        "Cache-Control": _cache_control(services, asked.repo)}))


async def report_page(request: Request) -> Response:
    services = services_of(request)
    refused = _too_many(request, services, "week")
    if refused is not None:
        return refused
    asked = _page_request(request, services, "week")
    if isinstance(asked, Response):
        return asked
    t = translator(asked.lang)
    raw_week = request.path_params["week"]
    week = check_week(services.config, asked.repo, raw_week, services.process.clock.now())
    if week is None:
        index = f"{report_path(asked.repo)}{report_query(asked.lang, asked.key)}"
        return _page_error(404, asked.lang, t("There is no report for this week."), services,
                           "week", PageLinks(index=index))
    query = report_query(asked.lang, asked.key)
    if week != raw_week:
        return RedirectResponse(f"{report_path(asked.repo, week)}{query}", status_code=308)
    async def build() -> Digest:
        await charge_page(services, asked.repo, week, asked.lang)
        return await services.process.digests.report(asked.repo, week, asked.lang)

    try:
        # Concurrent visitors of one report share its build (and its charge).
        digest = await services.report_builds.run((asked.repo, week, asked.lang), build)
    except OverBudget as exc:
        log.info("report %s %s not built: %s", asked.repo, week, exc)
        minutes = max(1, -(-exc.wait_seconds // 60))
        response = _page_error(503, asked.lang, t(
            "This report is not ready yet, and the report pages have used this hour's "
            "share of GitHub's points; try again in %(minutes)s minutes. Reports already "
            "built stay open.", minutes=minutes), services, "week")
        response.headers["Retry-After"] = str(exc.wait_seconds)
        return response
    except SourceError as exc:
        if isinstance(exc, UncoveredWeekError) or isinstance(services.process.source,
                                                             SnapshotSource):
            # Read from files, a week they do not hold will not come: not a 503.
            log.info("report %s %s not in the snapshots: %s", asked.repo, week, exc)
            index = f"{report_path(asked.repo)}{query}"
            return _page_error(404, asked.lang, t("The snapshot files this server reads hold "
                                                  "no data for this week."), services, "week",
                               PageLinks(index=index))
        log.warning("report %s %s unavailable: %s", asked.repo, week, exc)
        response = _page_error(503, asked.lang, t("GitHub could not be reached and this week "
                                                  "is not cached yet; try again in a few "
                                                  "minutes."), services, "week")
        response.headers["Retry-After"] = "120"
        return response
    tz = services.config.repo(asked.repo).timezone
    current = current_week(services.process.clock.now(), tz)
    before, after = shift_week(week, -1), shift_week(week, 1)
    links = PageLinks(
        languages=_language_links(asked, week),
        index=f"{report_path(asked.repo)}{query}",
        previous=(f"{report_path(asked.repo, before)}{query}"
                  if parse_week(before)[0] >= FIRST_YEAR else ""),
        next=(f"{report_path(asked.repo, after)}{query}"
              if parse_week(after) <= parse_week(current) else ""),
        github=f"https://github.com/{asked.repo}",
    )
    services.metrics.report_page("week", 200)
    return HTMLResponse(render_report_page(digest, links), headers=dict(PAGE_HEADERS, **{
        "Cache-Control": _cache_control(services, asked.repo)}))
