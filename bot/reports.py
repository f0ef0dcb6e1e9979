"""The web report of a week: its address, who may read it, which weeks exist, its digest.

A report lives at `{server.public_url}/reports/{owner}/{repo}/{week}?lang=zh`; the
index of a repository's weeks at `/reports/{owner}/{repo}`. Only repositories under
`[repos]` are served. A private repository (`private = true`) is served only with
`?key=`, an HMAC-SHA256 of the repository name under the secret in the environment
variable `PRDIGEST_REPORT_SECRET`: chat digests of private repositories carry the
signed link, everyone else gets 404. Without that secret private reports are never
served and their digests carry no link.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol
from urllib.parse import quote, urlencode

import msgspec
import redis

from bot.config import Config, secret
from bot.engine import build_digest
from bot.errors import SourceError, WeekError
from bot.i18n import translator
from bot.models import Digest, Lang, Snapshot
from bot.source import Source, WeekData
from bot.week import current_week, parse_week, shift_week, week_period

log = logging.getLogger(__name__)

REPORT_SECRET_ENV = "PRDIGEST_REPORT_SECRET"
"""The environment variable holding the secret that signs links to private reports."""

RECENT_WEEKS = 8
"""How many ISO weeks up to the current one the index always lists."""

FIRST_YEAR = 2008
KEY_PREFIX = "prdigest:v1"
_KEY_CHARS = 32
_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


# --- addresses and keys ---------------------------------------------------------------


def report_key(report_secret: str, repo: str) -> str:
    """The `?key=` that opens every report of `repo` (case-insensitive name)."""
    mac = hmac.new(report_secret.encode(), f"report:{repo.lower()}".encode(), hashlib.sha256)
    return mac.hexdigest()[:_KEY_CHARS]


def key_allows(report_secret: str | None, repo: str, key: str | None) -> bool:
    """Whether `key` opens `repo`'s reports; constant-time, and never without a secret."""
    if not report_secret or not key:
        return False
    return hmac.compare_digest(report_key(report_secret, repo), key)


def report_path(repo: str, week: str | None = None) -> str:
    """`/reports/owner/name[/week]`, each part percent-encoded."""
    owner, _, name = repo.partition("/")
    path = f"/reports/{quote(owner, safe='')}/{quote(name, safe='')}"
    return f"{path}/{quote(week, safe='')}" if week else path


def report_query(lang: Lang | None = None, key: str | None = None) -> str:
    params = {k: v for k, v in (("lang", lang), ("key", key)) if v}
    return f"?{urlencode(params)}" if params else ""


def report_url(config: Config, repo: str, week: str | None = None, *,
               lang: Lang | None = None) -> str | None:
    """The public address of a report (or of the weeks index when `week` is None).

    None for a repository that is not configured, and for a private one while no
    signing secret is set: such a link would only ever answer 404.
    """
    name = _configured_name(config, repo)
    if name is None:
        return None
    key = None
    if config.repo(name).private:
        report_secret = secret(REPORT_SECRET_ENV)
        if report_secret is None:
            return None
        key = report_key(report_secret, name)
    base = config.server.public_url.rstrip("/")
    return f"{base}{report_path(name, week)}{report_query(lang, key)}"


def with_report_url(digest: Digest, config: Config) -> Digest:
    """The digest with `report_url` set to its page, in the digest's language.

    What the scheduler and the `digest` command call before rendering, so every chat
    digest links to its full report (private repositories: the signed link).
    """
    url = report_url(config, digest.repository, digest.week, lang=digest.lang)
    return msgspec.structs.replace(digest, report_url=url)


def _configured_name(config: Config, repo: str) -> str | None:
    """The configured spelling of `repo` (GitHub names are case-insensitive)."""
    lowered = repo.lower()
    return next((name for name in config.repos if name.lower() == lowered), None)


# --- which weeks exist ------------------------------------------------------------------


@dataclass(frozen=True)
class ReportWeek:
    """One line of the weeks index: the week, its dates, whether a digest is cached."""

    week: str
    since: str
    until: str
    cached: bool
    current: bool


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
    starts = ((0, f"{prefix}:week:{repo}:"), (1, f"{prefix}:digest:report:{repo}:"),
              (1, f"{prefix}:digest:weekly:{repo}:"))
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
    limit = parse_week(this_week)
    weeks |= {w for w in windows | digests if _valid_past(w, limit)}
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


def _valid_past(week: str, limit: tuple[int, int]) -> bool:
    try:
        parsed = parse_week(week)
    except WeekError:
        return False
    return parsed[0] >= FIRST_YEAR and parsed <= limit


def check_week(config: Config, repo: str, week: str, now: datetime) -> str | None:
    """The week in canonical form when a report can exist for it, else None (404)."""
    try:
        year, number = parse_week(week)
    except WeekError:
        return None
    canonical = f"{year}-W{number:02d}"
    limit = parse_week(current_week(now, config.repo(repo).timezone))
    return canonical if _valid_past(canonical, limit) else None


# --- the report's digest ----------------------------------------------------------------


class DigestStore(Protocol):
    """Where finished report digests are kept (`bot.store.cache.Cache` has these two)."""

    def get_digest(self, key: str) -> bytes | None: ...

    def put_digest(self, key: str, data: bytes, ttl: int) -> None: ...


class ReportBuilder:
    """Builds a week's report digest through the (cached) source, and keeps it.

    Digests of past weeks are kept for `cache.past_week_ttl_seconds`, of the current
    week for `cache.current_week_ttl_seconds`; one built from stale data (GitHub
    failing) is not kept, so the next visit tries again.
    """

    def __init__(self, config: Config, source: Source, store: DigestStore | None, *,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC),
                 on_built: Callable[[], None] | None = None) -> None:
        self.config = config
        self.source = source
        self.store = store
        self.now = now
        self.on_built = on_built
        self._decoder = msgspec.json.Decoder(Digest)

    @staticmethod
    def store_key(repo: str, week: str, lang: Lang) -> str:
        return f"report:{repo}:{week}:{lang}"

    async def digest(self, repo: str, week: str, lang: Lang) -> Digest:
        """The report digest of `repo`'s `week` in `lang`; raises `SourceError` when
        neither GitHub nor the cache can give the data."""
        key = self.store_key(repo, week, lang)
        if self.store is not None:
            raw = await asyncio.to_thread(self.store.get_digest, key)
            if raw is not None:
                try:
                    return self._decoder.decode(raw)
                except msgspec.DecodeError:
                    log.warning("dropping an unreadable cached report %s", key)
        data: WeekData = await asyncio.to_thread(self.source.fetch_week, repo, week)
        previous = await self._previous(repo, week)
        built = build_digest(data.snapshot, week, repo_config=self.config.repo(repo), lang=lang,
                             previous=previous)
        if self.on_built is not None:
            self.on_built()
        if data.stale:
            t = translator(lang)
            age = round((data.age_seconds or 0) / 60)
            note = t("GitHub could not be reached; this digest uses data cached %(minutes)s "
                     "minutes ago.", minutes=age)
            return msgspec.structs.replace(built, notes=(note, *built.notes))
        if self.store is not None:
            ttl = self._ttl(repo, week)
            await asyncio.to_thread(self.store.put_digest, key, msgspec.json.encode(built), ttl)
        return built

    async def _previous(self, repo: str, week: str) -> Snapshot | None:
        """Last week's data, for the trends; the report is still worth giving without it."""
        try:
            data = await asyncio.to_thread(self.source.fetch_week, repo, shift_week(week, -1))
        except (SourceError, WeekError) as exc:
            log.info("no previous week for %s %s: %s", repo, week, exc)
            return None
        return data.snapshot

    def _ttl(self, repo: str, week: str) -> int:
        settings = self.config.cache
        current = current_week(self.now(), self.config.repo(repo).timezone)
        return (settings.current_week_ttl_seconds if week == current
                else settings.past_week_ttl_seconds)
