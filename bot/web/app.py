"""One ASGI app for everything that arrives over HTTP, and the work that runs beside it.

Routes: each configured chat platform's webhook (the adapters' own routes),
`/github/webhook` (merged-PR notices), `/reports/{owner}/{repo}[/{week}]` (report
pages), `/healthz` and `/metrics`. The lifespan starts the adapters (Socket Mode,
long polling, long connection), the weekly scheduler and, when no GitHub webhook
secret is set, the merge poller; it stops them in reverse order.

A platform whose secrets are not in the environment is simply off (shown in
`/healthz`), so the example config starts anywhere. Without Redis the bot still
answers and serves reports, uncached; subscriptions, the weekly schedule and
cross-replica dedupe need it, and `/healthz` says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

import redis
import redis.asyncio as aioredis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from bot.chat.handler import CommandHandler
from bot.config import ChannelConfig, Config, secret
from bot.delivery.notices import MergeNotifier
from bot.delivery.poller import ClosedLister, MergePoller
from bot.delivery.poster import AdapterPoster
from bot.delivery.schedule import Poster, Scheduler
from bot.digests import Digests
from bot.errors import SourceError
from bot.github.closed import PullLister
from bot.github.events import PayloadError, merged_pull, signature_valid
from bot.github.source import GitHubSource
from bot.i18n import translator
from bot.links import REPORT_SECRET_ENV, key_allows, report_path, report_query
from bot.models import Command, Digest, Lang, PullRequest, Reply
from bot.render.html import PageLinks, render_error_page, render_index_page, render_report_page
from bot.source import Source
from bot.store.cache import Cache, CachedSource
from bot.store.claims import Claims, Deduper
from bot.store.keys import Keys
from bot.store.subscriptions import RedisSubscriptionStore
from bot.web.metrics import CONTENT_TYPE_LATEST, Metrics
from bot.web.platforms import Adapter, AdapterNotices, build_adapters, platform_statuses
from bot.web.report_weeks import check_week, report_weeks
from bot.week import FIRST_YEAR, current_week, parse_week, shift_week

log = logging.getLogger(__name__)

MAX_WEBHOOK_BYTES = 5 << 20
WEBHOOK_ANSWER_SECONDS = 8.0
DELIVERY_TTL_SECONDS = 7 * 24 * 3600
"""GitHub lets a delivery be redelivered for three days; it is remembered for a week."""

PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
LANGS: tuple[Lang, ...] = get_args(Lang)


def utc_now() -> datetime:
    return datetime.now(UTC)




# --- composition helpers ------------------------------------------------------------------


class MeteredCache(Cache):
    """The Redis cache, counting each lookup as a hit or a miss in `/metrics`."""

    def __init__(self, client: redis.Redis, metrics: Metrics) -> None:
        super().__init__(client)
        self.metrics = metrics

    def _count(self, kind: str, hit: bool) -> None:
        self.metrics.cache_lookup(kind, "hit" if hit else "miss")

    def get_week(self, repo: str, week: str, tz: str) -> Any:
        entry = super().get_week(repo, week, tz)
        self._count("week", entry is not None)
        return entry

    def get_pulls(self, repo: str, refs: Sequence[tuple[int, str]]) -> dict[int, PullRequest]:
        found = super().get_pulls(repo, refs)
        for _ in range(len(found)):
            self._count("pull", True)
        for _ in range(len(refs) - len(found)):
            self._count("pull", False)
        return found

    def get_pointer(self, repo: str, number: int) -> Any:
        pointer = super().get_pointer(repo, number)
        self._count("pointer", pointer is not None)
        return pointer

    def get_digest(self, key: str) -> bytes | None:
        raw = super().get_digest(key)
        self._count("digest", raw is not None)
        return raw


class MeteredHandler:
    """The command handler as one platform sees it: counts every answer by platform and
    outcome."""

    def __init__(self, handler: CommandHandler, metrics: Metrics, platform: str,
                 config: Config) -> None:
        self.handler = handler
        self.metrics = metrics
        self.platform = platform
        self.config = config

    async def handle(self, command: Command, *, channel: ChannelConfig | None,
                     user: str | None = None) -> Reply:
        started = time.perf_counter()
        reply = await self.handler.handle(command, channel=channel, user=user)
        self.metrics.command(self.platform, command.kind, reply, time.perf_counter() - started)
        return reply


class MeteredPoster:
    """The scheduler's poster: counts posts by platform and outcome."""

    def __init__(self, inner: Poster, metrics: Metrics, config: Config) -> None:
        self.inner = inner
        self.metrics = metrics
        self.config = config

    async def post_digest(self, channel: ChannelConfig, digest: Digest, *, delivery_key: str
                          ) -> list[str]:
        try:
            ids = await self.inner.post_digest(channel, digest, delivery_key=delivery_key)
        except Exception:
            self.metrics.digest_posted(channel.platform, "failed")
            raise
        self.metrics.digest_posted(channel.platform, "ok")
        return ids

    def idempotency_window(self, channel: ChannelConfig) -> timedelta | None:
        return self.inner.idempotency_window(channel)

    async def complete_delivery(self, channel: ChannelConfig, digest: Digest, *,
                                delivery_key: str, since: datetime) -> list[str] | None:
        """Whether a delivery in doubt arrived, when the platform can tell (Slack)."""
        return await self.inner.complete_delivery(channel, digest, delivery_key=delivery_key,
                                                  since=since)



@dataclass
class GitHubHealth:
    """How GitHub has been answering, for /healthz: a service that serves stale data or
    "try again later" while GitHub fails is degraded, and should say so.

    5xx, network errors, rate limits (403/429) and a rejected token (401) are failures;
    other answers (a 404 for a PR that does not exist) show GitHub is reachable.
    """

    clock: Callable[[], datetime] = utc_now
    consecutive_failures: int = 0
    last_success_at: datetime | None = None
    last_failure_at: datetime | None = None
    last_failure: str | None = None

    def record(self, status: int | str) -> None:
        failed = status == "error" or (isinstance(status, int) and (
            status >= 500 or status in (401, 403, 429)))
        if failed:
            self.consecutive_failures += 1
            self.last_failure_at = self.clock()
            self.last_failure = str(status)
        else:
            self.consecutive_failures = 0
            self.last_success_at = self.clock()

    @property
    def ok(self) -> bool:
        return self.consecutive_failures == 0

    def status(self) -> dict[str, Any]:
        def at(moment: datetime | None) -> str | None:
            return moment.isoformat() if moment else None

        return {"ok": self.ok, "consecutive_failures": self.consecutive_failures,
                "last_success_at": at(self.last_success_at),
                "last_failure_at": at(self.last_failure_at), "last_failure": self.last_failure}


# --- the services ---------------------------------------------------------------------------


@dataclass
class Services:
    """Everything the routes and the lifespan share; one per app, no globals."""

    config: Config
    metrics: Metrics
    source: Source
    handler: CommandHandler
    deduper: Deduper
    claims: Claims
    digests: Digests
    notifier: MergeNotifier
    adapters: dict[str, Adapter]
    redis_sync: redis.Redis | None = None
    redis_async: aioredis.Redis | None = None
    github: GitHubSource | None = None
    scheduler: Scheduler | None = None
    poller: MergePoller | None = None
    webhook_secret: str | None = None
    report_secret: str | None = None
    now: Callable[[], datetime] = utc_now
    background: bool = True
    github_health: GitHubHealth = field(default_factory=GitHubHealth)
    start_errors: dict[str, str] = field(default_factory=dict)
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    pending: set[asyncio.Task[Any]] = field(default_factory=set)
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)

    # --- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Start the adapters, then the scheduler and the poller as background tasks.

        An adapter that fails to start (its platform unreachable) is logged and shown
        in /healthz; the rest of the service runs on.
        """
        self.stop_event = asyncio.Event()
        for platform, adapter in self.adapters.items():
            try:
                await adapter.start()
            except Exception as exc:
                log.exception("%s did not start", platform)
                self.start_errors[platform] = f"{type(exc).__name__}: {exc}"
        if not self.background:
            return
        if self.scheduler is not None:
            self.tasks["scheduler"] = asyncio.create_task(
                self.scheduler.run_forever(self.stop_event), name="prdigest-scheduler")
        if self.poller is not None:
            self.tasks["poller"] = asyncio.create_task(
                self.poller.run_forever(self.stop_event), name="prdigest-merge-poller")

    async def stop(self) -> None:
        """Stop background work (a post in flight finishes), adapters, connections."""
        self.stop_event.set()
        running = list(self.tasks.values()) + list(self.pending)
        if running:
            _, late = await asyncio.wait(running, timeout=30)
            for task in late:
                task.cancel()
            # redis-py can swallow a cancellation mid-command, so a cancelled task is
            # given a bounded wait rather than awaited without end.
            if late:
                await asyncio.wait(late, timeout=5)
        self.tasks.clear()
        for platform, adapter in reversed(list(self.adapters.items())):
            try:
                await adapter.close()
            except Exception:
                log.exception("%s did not close cleanly", platform)
        if self.github is not None:
            self.github.close()
        if self.redis_async is not None:
            await self.redis_async.aclose()
        if self.redis_sync is not None:
            self.redis_sync.close()

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep a task that outlives its request until it ends (and at shutdown)."""
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    # --- health -----------------------------------------------------------------------

    async def redis_status(self) -> dict[str, Any]:
        if self.redis_async is None:
            return {"configured": False, "ok": False,
                    "note": f"set {self.config.cache.url_env} for the cache, subscriptions "
                            "and the weekly schedule"}
        try:
            await asyncio.wait_for(self.redis_async.ping(), timeout=2)
        except (redis.RedisError, OSError, TimeoutError) as exc:
            return {"configured": True, "ok": False, "error": type(exc).__name__}
        return {"configured": True, "ok": True}

    def platform_status(self) -> dict[str, Any]:
        return platform_statuses(self.config, self.adapters, self.start_errors)

    def background_status(self) -> dict[str, Any]:
        def task_state(name: str) -> str:
            task = self.tasks.get(name)
            if task is None:
                return "not started"
            return "stopped" if task.done() else "running"

        scheduler: dict[str, Any]
        if self.scheduler is None:
            scheduler = {"enabled": False, "reason": "the weekly schedule needs Redis"}
        else:
            scheduler = {"enabled": True, "task": task_state("scheduler"),
                         **self.scheduler.status()}
        if self.webhook_secret:
            notices: dict[str, Any] = {"mode": "webhook", "route": "/github/webhook"}
        elif self.poller is not None:
            notices = {"mode": "poller", "task": task_state("poller"),
                       "every_minutes": self.config.github.poll_minutes,
                       "rounds": self.poller.polls}
        else:
            notices = {"mode": "off",
                       "reason": f"no webhook secret in {self.config.github.webhook_secret_env}"
                                 " and no GitHub source to poll"}
        return {"scheduler": scheduler, "merge_notices": notices}


def build_services(
    config: Config,
    *,
    redis_url: str | None = None,
    source: Source | None = None,
    adapters: Mapping[str, Adapter] | None = None,
    adapter_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    pull_lister: ClosedLister | None = None,
    now: Callable[[], datetime] = utc_now,
    background: bool = True,
    metrics: Metrics | None = None,
) -> Services:
    """Wire the parts for one app.

    `source`: where PRs come from (default: GitHub behind the Redis cache).
    `adapters`: ready adapters by platform (default: each platform's `from_config`,
    with `adapter_overrides[platform]` passed on, e.g. a fake server's URL).
    `pull_lister`: what the merge poller asks (default: the GitHub source's REST list).
    """
    metrics = metrics or Metrics()
    github_health = GitHubHealth()

    def on_github_request(api: str, status: int | str) -> None:
        metrics.github_request(api, status)
        github_health.record(status)

    redis_sync = redis.Redis.from_url(redis_url) if redis_url else None
    redis_async = aioredis.Redis.from_url(redis_url) if redis_url else None
    github: GitHubSource | None = None
    if source is None:
        github = GitHubSource(config, on_request=on_github_request)
        cache = MeteredCache(redis_sync, metrics) if redis_sync is not None else None
        source = CachedSource(github, cache, config, on_held_lookup=metrics.held_pull_lookup)
        if pull_lister is None:
            pull_lister = PullLister(github.github.requester, on_request=on_github_request)
    store = RedisSubscriptionStore(redis_sync) if redis_sync is not None else None
    digest_store = MeteredCache(redis_sync, metrics) if redis_sync is not None else None
    digests = Digests(config, source, subscriptions=store, reports=digest_store, now=now,
                      on_built=metrics.digest_built)
    handler = CommandHandler(config, source, store, now=now, digests=digests)
    deduper = Deduper(redis_async)
    claims = Claims(redis_async)
    if adapters is None:
        adapters = build_adapters(
            config, lambda platform: MeteredHandler(handler, metrics, platform, config),
            deduper, adapter_overrides)
    adapter_map = dict(adapters)
    notifier = MergeNotifier(
        config, source, store, claims, AdapterNotices(adapter_map), digests=digests,
        on_sent=lambda platform, ok: metrics.notice_posted(platform, "ok" if ok else "failed"),
    )
    webhook_secret = secret(config.github.webhook_secret_env)
    scheduler = None
    if redis_async is not None:
        poster = MeteredPoster(AdapterPoster(adapter_map), metrics, config)
        scheduler = Scheduler(config, source, redis_async, poster, subscriptions=store,
                              digests=digests)
    poller = None
    if webhook_secret is None and pull_lister is not None:
        poller = MergePoller(config, pull_lister, claims, notifier, now=now)
    return Services(
        config=config, metrics=metrics, source=source, handler=handler, deduper=deduper,
        claims=claims, digests=digests, notifier=notifier, adapters=adapter_map,
        redis_sync=redis_sync, redis_async=redis_async, github=github, scheduler=scheduler,
        poller=poller, webhook_secret=webhook_secret, report_secret=secret(REPORT_SECRET_ENV),
        now=now, background=background, github_health=github_health,
    )


# --- routes ---------------------------------------------------------------------------------


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def healthz(request: Request) -> Response:
    """Redis, GitHub, each platform's configuration, the background work; 503 when
    Redis is configured but unreachable, "degraded" (still 200: the bot answers, from
    the cache or with "try again later") while GitHub's requests fail."""
    services = _services(request)
    redis_state = await services.redis_status()
    healthy = redis_state["ok"] or not redis_state["configured"]
    github_ok = services.github is None or services.github_health.ok
    body = {
        "status": ("ok" if github_ok else "degraded") if healthy else "unavailable",
        "redis": redis_state,
        "platforms": services.platform_status(),
        "github": {
            "source": "github" if services.github is not None else "snapshot",
            "token": bool(secret(services.config.github.token_env)),
            **(services.github_health.status() if services.github is not None
               else {"ok": True}),
        },
        **services.background_status(),
    }
    return JSONResponse(body, status_code=200 if healthy else 503,
                        headers={"Cache-Control": "no-store"})


async def metrics_endpoint(request: Request) -> Response:
    services = _services(request)
    return Response(services.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)


async def github_webhook(request: Request) -> Response:
    """A GitHub delivery: verified, deduplicated, and a merged PR announced."""
    services = _services(request)
    metrics = services.metrics
    if not services.webhook_secret:
        return JSONResponse({"error": "GitHub webhook not configured"}, status_code=404)
    declared = request.headers.get("content-length", "0")
    if not declared.isdigit() or int(declared) > MAX_WEBHOOK_BYTES:
        return JSONResponse({"error": "payload too large"}, status_code=413)
    body = await request.body()
    if len(body) > MAX_WEBHOOK_BYTES:
        return JSONResponse({"error": "payload too large"}, status_code=413)
    if not signature_valid(services.webhook_secret, body,
                           request.headers.get("x-hub-signature-256")):
        metrics.webhook("unverified", "rejected")
        return JSONResponse({"error": "invalid signature"}, status_code=401)
    event = request.headers.get("x-github-event", "")
    label = event if event in ("ping", "pull_request") else "other"
    if event == "ping":
        metrics.webhook(label, "ok")
        return JSONResponse({"ok": True})
    if event != "pull_request":
        metrics.webhook(label, "ignored")
        return JSONResponse({"ignored": "event"}, status_code=202)
    delivery = request.headers.get("x-github-delivery", "").strip()
    if not delivery or len(delivery) > 100:
        metrics.webhook(label, "bad")
        return JSONResponse({"error": "X-GitHub-Delivery is required"}, status_code=400)
    try:
        payload = json.loads(body)
        if not isinstance(payload, dict):
            raise PayloadError("expected a JSON object")
        merged = merged_pull(payload)
    except (ValueError, PayloadError, RecursionError) as exc:
        # RecursionError: JSON nested too deep for the parser, still the sender's fault.
        metrics.webhook(label, "bad")
        return JSONResponse({"error": f"unreadable payload: {exc}"}, status_code=400)
    if merged is None:
        metrics.webhook(label, "ignored")
        return JSONResponse({"ignored": "not a merge"}, status_code=202)
    claim = Keys.github_delivery(delivery)
    if not await services.claims.claim(claim, DELIVERY_TTL_SECONDS):
        metrics.webhook(label, "duplicate")
        return JSONResponse({"duplicate": True})

    async def announce() -> dict[str, Any]:
        try:
            result = await services.notifier.announce(merged.repository, merged.pull)
        except Exception:
            # Forget the delivery, so GitHub's "redeliver" can try again.
            await services.claims.release(claim)
            raise
        if result.failed:
            await services.claims.release(claim)
        return {"notified": result.notified, "failed": result.failed}

    task = asyncio.ensure_future(announce())
    services.track(task)
    try:
        answer = await asyncio.wait_for(asyncio.shield(task), timeout=WEBHOOK_ANSWER_SECONDS)
    except TimeoutError:
        metrics.webhook(label, "accepted")
        return JSONResponse({"accepted": True}, status_code=202)
    except Exception:
        log.exception("merged-PR notice failed")
        metrics.webhook(label, "failed")
        return JSONResponse({"error": "notice failed"}, status_code=500)
    metrics.webhook(label, "ok")
    return JSONResponse(answer)


# --- report pages ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _PageRequest:
    repo: str
    lang: Lang
    key: str | None


def _default_lang(config: Config, repo: str) -> Lang:
    """The language of the repository's first channel, else Chinese."""
    return next((c.lang for c in config.channels if c.repo.lower() == repo.lower()), "zh")


def _page_error(status: int, lang: Lang, message: str, services: Services, page: str
                ) -> Response:
    services.metrics.report_page(page, status)
    headers = dict(PAGE_HEADERS, **{"Cache-Control": "no-store"})
    return HTMLResponse(render_error_page(status, lang, message), status_code=status,
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
    repo = next((r for r in config.repos if r.lower() == f"{owner}/{name}".lower()), None)
    if repo is not None and config.repo(repo).private and not key_allows(
            services.report_secret, repo, key):
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


async def report_index(request: Request) -> Response:
    services = _services(request)
    asked = _page_request(request, services, "index")
    if isinstance(asked, Response):
        return asked
    weeks = await asyncio.to_thread(report_weeks, services.config, asked.repo,
                                    services.redis_sync, services.now())
    query = report_query(asked.lang, asked.key)
    rows = [(w, f"{report_path(asked.repo, w.week)}{query}") for w in weeks]
    links = PageLinks(languages=_language_links(asked, None),
                      github=f"https://github.com/{asked.repo}")
    html = render_index_page(asked.repo, rows, asked.lang, links)
    services.metrics.report_page("index", 200)
    return HTMLResponse(html, headers=dict(PAGE_HEADERS, **{
        "Cache-Control": _cache_control(services, asked.repo)}))


async def report_page(request: Request) -> Response:
    services = _services(request)
    asked = _page_request(request, services, "week")
    if isinstance(asked, Response):
        return asked
    t = translator(asked.lang)
    raw_week = request.path_params["week"]
    week = check_week(services.config, asked.repo, raw_week, services.now())
    if week is None:
        return _page_error(404, asked.lang, t("There is no report for this week."), services,
                           "week")
    query = report_query(asked.lang, asked.key)
    if week != raw_week:
        return RedirectResponse(f"{report_path(asked.repo, week)}{query}", status_code=308)
    try:
        digest = await services.digests.report(asked.repo, week, asked.lang)
    except SourceError as exc:
        log.warning("report %s %s unavailable: %s", asked.repo, week, exc)
        response = _page_error(503, asked.lang, t("GitHub could not be reached and this week "
                                                  "is not cached yet; try again in a few "
                                                  "minutes."), services, "week")
        response.headers["Retry-After"] = "120"
        return response
    tz = services.config.repo(asked.repo).timezone
    current = current_week(services.now(), tz)
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


# --- the app --------------------------------------------------------------------------------


def create_app(config: Config, *, freeze_heap: bool = False, **options: Any) -> Starlette:
    """The whole service as one Starlette app; `options` go to `build_services`.
    `freeze_heap`: see `freeze_startup_heap` (for a long-running server process)."""
    services = build_services(config, **options)
    return app_for(services, freeze_heap=freeze_heap)


def freeze_startup_heap() -> None:
    """Everything alive once the service has started - modules, the SDKs' tables,
    templates, config - lives as long as the process. Moved out of the cyclic
    collector's sight, its full collections no longer walk some 400,000 objects: each
    took about 0.3 s during which no request was answered."""
    gc.collect()
    gc.freeze()


def app_for(services: Services, *, freeze_heap: bool = False) -> Starlette:
    """The Starlette app around ready services (the lifespan starts and stops them)."""
    routes: list[BaseRoute] = []
    for adapter in services.adapters.values():
        routes += adapter.routes()
    routes += [
        Route("/github/webhook", github_webhook, methods=["POST"]),
        Route("/reports/{owner}/{repo}", report_index, methods=["GET"]),
        Route("/reports/{owner}/{repo}/{week}", report_page, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await services.start()
        if freeze_heap:
            freeze_startup_heap()
        try:
            yield
        finally:
            await services.stop()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.services = services
    return app
