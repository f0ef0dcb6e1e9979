"""`/`, the way in to the report pages, and the page for any address that has none."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from bot.i18n import translator
from bot.links import report_path, report_query
from bot.models import Lang
from bot.render.html import HomeEntry, PageLinks, render_error_page, render_home_page
from bot.web.reports import LANGS, PAGE_HEADERS
from bot.web.services import services_of
from bot.week import current_week, shift_week


def _lang(request: Request) -> Lang:
    """`?lang=`, else the language of the first configured channel, else Chinese."""
    asked = request.query_params.get("lang")
    if asked in LANGS:
        return asked
    channels = services_of(request).config.channels
    return channels[0].lang if channels else "zh"


async def home(request: Request) -> Response:
    """Every repository of the config file that is not private, linking to its weeks and
    to its last full week (private ones are reached only through signed links). Those
    chats follow on their own have their pages too, reached from their chats' links, but
    are not listed here: what a chat follows is its own business."""
    services = services_of(request)
    lang = _lang(request)
    query = report_query(lang)
    entries = []
    repos = services.process.live.file.repos
    for repo, settings in sorted(repos.items(), key=lambda r: r[0].lower()):
        if settings.private:
            continue
        week = shift_week(current_week(services.process.clock.now(), settings.timezone), -1)
        entries.append(HomeEntry(repo=repo, index=f"{report_path(repo)}{query}",
                                 latest=f"{report_path(repo, week)}{query}", week=week))
    links = PageLinks(languages={code: f"/?lang={code}" for code in LANGS}, home="")
    services.metrics.report_page("home", 200)
    return HTMLResponse(render_home_page(entries, lang, links),
                        headers=dict(PAGE_HEADERS, **{"Cache-Control": "public, max-age=120"}))


async def not_found(request: Request, exc: Exception) -> Response:
    """An address with no page: the report pages' 404, with the way back to `/`; other
    HTTP errors keep Starlette's plain answer."""
    if not isinstance(exc, HTTPException) or exc.status_code != 404:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        return Response(status_code=status)
    lang = _lang(request)
    message = translator(lang)("There is no page at this address.")
    return HTMLResponse(render_error_page(404, lang, message), status_code=404,
                        headers=dict(PAGE_HEADERS, **{"Cache-Control": "no-store"}))
