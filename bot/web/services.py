"""Everything the routes and the lifespan share, and the one place that wires it: the
composition root of the service.

A platform whose secrets are not in the environment is simply off (shown in
`/healthz`), so the example config starts anywhere. Without Redis the bot still
answers and serves reports, uncached; subscriptions, the weekly schedule and
cross-replica dedupe need it, and `/healthz` says so. Platforms come from
`adapters.registry`; nothing here names one."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from starlette.requests import Request

from adapters.base import ChatAdapter, DeliveryError
from adapters.poster import AdapterPoster
from adapters.registry import PLATFORMS
from bot.chat.handler import CommandHandler
from bot.chat.inbound import CommandAnswering, FirstSeen
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ChannelConfig, Config, secret
from bot.delivery.batches import BatchFlusher
from bot.delivery.notices import MergeNotifier
from bot.delivery.poller import ClosedLister, MergePoller
from bot.delivery.schedule import Scheduler
from bot.digests import Digests
from bot.events import Events
from bot.github.budget import Budget
from bot.github.closed import poll_lister
from bot.github.source import GitHubSource
from bot.links import REPORT_SECRET_ENV
from bot.models import Digest, Reply
from bot.narrate import Narrator, narrator_for
from bot.pacing import LocalPacer, Pacer
from bot.source import Source
from bot.store.cache import CachedSource
from bot.store.claims import Claims
from bot.store.coordination import Coordination
from bot.store.memory import MemoryCoordination
from bot.store.pacing import SharedPacer
from bot.store.redis.cache import Cache
from bot.store.redis.client import sync_client
from bot.store.redis.coordination import RedisCoordination
from bot.store.redis.subscriptions import RedisSubscriptionStore
from bot.web.github_health import GitHubHealth
from bot.web.metrics import Metrics
from bot.web.throttle import Allowance, ClientRate, SingleFlight

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Everything the routes and the lifespan share; one per app, no globals."""

    config: Config
    metrics: Metrics
    source: Source
    handler: CommandHandler
    claims: Claims
    digests: Digests
    notifier: MergeNotifier
    adapters: dict[str, ChatAdapter]
    port: Coordination = field(default_factory=MemoryCoordination)
    cache: Cache | None = None
    github: GitHubSource | None = None
    scheduler: Scheduler | None = None
    poller: MergePoller | None = None
    flusher: BatchFlusher | None = None
    webhook_secret: str | None = None
    report_secret: str | None = None
    clock: Clock = SYSTEM_CLOCK
    background: bool = True
    github_health: GitHubHealth = field(default_factory=GitHubHealth)
    narrator: Narrator | None = None
    start_errors: dict[str, str] = field(default_factory=dict)
    redis_problem: str | None = None
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    pending: set[asyncio.Task[Any]] = field(default_factory=set)
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)
    # Report pages are open to anyone: one build per (repo, week, lang), so many a minute.
    report_builds: SingleFlight[tuple[str, str, str], Digest] = field(
        default_factory=SingleFlight)
    report_rate: ClientRate | None = None
    report_points: Allowance | None = None

    # --- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Start the adapters, then the scheduler and the poller as background tasks.

        An adapter that fails to start (its platform unreachable) is logged and shown
        in /healthz; the rest of the service runs on.
        """
        self.stop_event = asyncio.Event()
        if self.port.shared:
            # Once, at start: without EVAL the locks cannot work; say so in /healthz
            # (503) instead of failing every post while the slot locks linger.
            self.redis_problem = await self.port.problem()
            if self.redis_problem is not None:
                log.error("redis: %s; the weekly schedule is not started",
                          self.redis_problem)
        for platform, adapter in self.adapters.items():
            try:
                await adapter.start()
            except Exception as exc:
                log.exception("%s did not start", platform)
                self.start_errors[platform] = f"{type(exc).__name__}: {exc}"
        if not self.background:
            return
        if self.port.shared:
            self.tasks["claims"] = asyncio.create_task(
                self.claims.keep_alive(self.stop_event), name="prdigest-claims-alive")
        if self.scheduler is not None and self.redis_problem is None:
            self.tasks["scheduler"] = asyncio.create_task(
                self.scheduler.run_forever(self.stop_event), name="prdigest-scheduler")
        if self.poller is not None:
            self.tasks["poller"] = asyncio.create_task(
                self.poller.run_forever(self.stop_event), name="prdigest-merge-poller")
        if self.flusher is not None:
            self.tasks["notice-batches"] = asyncio.create_task(
                self.flusher.run_forever(self.stop_event), name="prdigest-notice-batches")

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
        if self.poller is not None:
            self.poller.close()
        if self.narrator is not None:
            await self.narrator.close()
        await self.port.close()
        if self.cache is not None:
            self.cache.close()

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep a task that outlives its request until it ends (and at shutdown)."""
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    # --- health -----------------------------------------------------------------------

    async def redis_status(self) -> dict[str, Any]:
        if not self.port.shared:
            return {"configured": False, "ok": False,
                    "note": f"set {self.config.cache.url_env} for the cache, subscriptions "
                            "and the weekly schedule"}
        if self.redis_problem is not None:
            return {"configured": True, "ok": False, "error": "NoScripting",
                    "reason": self.redis_problem}
        health = await self.port.health(timeout=2)
        return {"configured": True, "ok": health.ok,
                **({} if health.error is None else {"error": health.error}),
                **({} if health.masters is None else {"cluster": {"masters": health.masters}})}

    def narrator_status(self) -> dict[str, Any]:
        """/healthz's view of the optional narrator: off, or its model and circuit."""
        if self.narrator is None:
            return {"configured": False}
        return {"configured": True, **self.narrator.status()}

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
            if self.redis_problem is not None:
                scheduler["reason"] = self.redis_problem
        poll: dict[str, Any] = {} if self.poller is None else {
            "task": task_state("poller"), "every_minutes": self.poller.interval_seconds / 60,
            "rounds": self.poller.polls, "announced": self.poller.announced,
            "paused_by_rate_limit": self.poller.paused}
        if self.webhook_secret:
            notices: dict[str, Any] = {"mode": "webhook", "route": "/github/webhook"}
            if poll:
                notices["reconcile"] = poll
        elif self.poller is not None:
            notices = {"mode": "poller", **poll}
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
    adapters: Mapping[str, ChatAdapter] | None = None,
    adapter_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    pull_lister: ClosedLister | None = None,
    clock: Clock = SYSTEM_CLOCK,
    background: bool = True,
    metrics: Metrics | None = None,
    llm: bool = True,
) -> Services:
    """Wire the parts for one app: the one `Digests` (config, source, subscriptions,
    narrator, clock) that chat, the schedule, notices and report pages all share.

    `source`: where PRs come from (default: GitHub behind the Redis cache).
    `adapters`: ready adapters by platform (default: each platform's `from_config`,
    with `adapter_overrides[platform]` passed on, e.g. a fake server's URL).
    `pull_lister`: what the merge poller asks (default: the GitHub source's REST list).
    `llm=False` keeps the narrator off even when `[llm]` is configured (`--no-llm`).
    """
    metrics = metrics or Metrics(platforms=[spec.name for spec in PLATFORMS])
    # The core tells what happens as events; /metrics counts them.
    events = Events()
    events.subscribe(metrics.on)
    github_health = GitHubHealth(clock)

    def on_github_request(api: str, status: int | str) -> None:
        metrics.github_request(api, status)
        github_health.record(status)

    variable = config.cache.url_env
    # Without Redis, this process coordinates with itself (in memory) and keeps no cache.
    port: Coordination = (RedisCoordination.from_url(redis_url, variable) if redis_url
                          else MemoryCoordination(clock))
    client = sync_client(redis_url, variable) if redis_url else None
    # The cache's lookups count in /metrics; the plain one looks up for the page budget.
    counted = Cache(client, events=events) if client is not None else None
    github: GitHubSource | None = None
    if source is None:
        budget = Budget(on_update=lambda rate: metrics.github_points(
            rate.cost, rate.remaining, rate.reset_at.timestamp()))
        github = GitHubSource(config, on_request=on_github_request, budget=budget)
        source = CachedSource(github, counted, config, events=events, clock=clock)
        if pull_lister is None:
            pull_lister = poll_lister(github, on_request=on_github_request)
    store = RedisSubscriptionStore(client) if client is not None else None
    digest_store = counted
    narrator = narrator_for(config, digest_store, events=metrics, enabled=llm)
    digests = Digests(config, source, subscriptions=store, reports=digest_store, clock=clock,
                      events=events, narrator=narrator)
    handler = CommandHandler(digests, events=events)
    claims = Claims(port, clock=clock)
    if adapters is None:
        # Posts take their turns in lanes every replica shares (in this process alone
        # without Redis).
        pacer = SharedPacer(port, clock=clock) if port.shared else LocalPacer(clock)
        adapters = build_adapters(config, handler, claims, adapter_overrides, pacer=pacer)
    adapter_map = dict(adapters)
    notifier = MergeNotifier(digests, claims, AdapterNotices(adapter_map), events=events,
                             clock=clock)
    webhook_secret = secret(config.github.webhook_secret_env)
    scheduler = None
    if port.shared:
        scheduler = Scheduler(digests, port, AdapterPoster(adapter_map), events=events,
                              budget=github.budget if github is not None else None,
                              clock=clock)
    poller = None
    if pull_lister is not None and (webhook_secret is None or config.github.reconcile_minutes):
        # With a webhook the poller reconciles: it announces what no delivery brought.
        every = (config.github.poll_minutes if webhook_secret is None
                 else config.github.reconcile_minutes)
        poller = MergePoller(config, pull_lister, claims, notifier, clock=clock,
                             interval_seconds=every * 60.0)
    flusher = None
    if notifier.batches is not None and any(c.notice_batch_minutes for c in config.channels):
        flusher = BatchFlusher(config, notifier, notifier.batches, claims, clock=clock)
    return Services(
        config=config, metrics=metrics, source=source, handler=handler,
        claims=claims, digests=digests, notifier=notifier, adapters=adapter_map,
        port=port, cache=Cache(client) if client is not None else None, github=github,
        scheduler=scheduler,
        poller=poller, flusher=flusher, webhook_secret=webhook_secret,
        report_secret=secret(REPORT_SECRET_ENV),
        clock=clock, background=background, github_health=github_health, narrator=narrator,
        report_rate=ClientRate(config.server.report_requests_per_minute, clock=clock),
        report_points=Allowance(config.server.report_points_per_hour, clock=clock),
    )


def services_of(request: Request) -> Services:
    """The services of the app serving `request`."""
    services: Services = request.app.state.services
    return services


class AdapterNotices:
    """Merged-PR notices through the chat adapters (`bot.subscriptions.NoticeSender`)."""

    def __init__(self, adapters: Mapping[str, ChatAdapter]) -> None:
        self.adapters = adapters

    def can_send(self, channel: ChannelConfig) -> bool:
        return channel.platform in self.adapters

    async def send(self, channel: ChannelConfig, reply: Reply, *, thread: str | None = None,
                   key: str | None = None) -> list[str]:
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            raise DeliveryError(f"{channel.platform} is not configured")
        return await adapter.send_reply(channel.id, reply, thread=thread, idempotency_key=key)

    async def complete(self, channel: ChannelConfig, reply: Reply, *, key: str,
                       since: datetime, thread: str | None = None) -> list[str] | None:
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            return None
        found = await adapter.complete_reply(channel.id, reply, idempotency_key=key,
                                             since=since, thread=thread)
        return None if found is None else list(found)


def build_adapters(config: Config, handler: CommandAnswering, deduper: FirstSeen,
                   overrides: Mapping[str, Mapping[str, Any]] | None = None, *,
                   pacer: Pacer | None = None) -> dict[str, ChatAdapter]:
    """Each registered platform's adapter whose secrets are set, answering through
    `handler` and posting in its turns on `pacer`; `overrides[platform]`
    go to its `from_config` (tests). A platform without credentials is not even
    imported."""
    overrides = overrides or {}
    built: dict[str, ChatAdapter] = {}
    for spec in PLATFORMS:
        if not spec.has_credentials(config):
            missing = spec.unconfigured_status(config).get("missing_env") or []
            log.info("%s off: %s not set", spec.name, ", ".join(missing) or "credentials")
            continue
        adapter = spec.load().from_config(config, handler, deduper,
                                          **{"pacer": pacer, **overrides.get(spec.name, {})})
        if adapter is not None:
            built[spec.name] = adapter
    return built


def platform_statuses(config: Config, adapters: Mapping[str, ChatAdapter],
                      start_errors: Mapping[str, str]) -> dict[str, Any]:
    """/healthz's view of every platform: the adapter's own status, or the names of the
    variables an unconfigured one still needs."""
    statuses: dict[str, Any] = {}
    for spec in PLATFORMS:
        adapter = adapters.get(spec.name)
        if adapter is None:
            statuses[spec.name] = spec.unconfigured_status(config)
            continue
        try:
            status = dict(adapter.status())
        except Exception as exc:
            status = {"platform": spec.name, "configured": True,
                      "error": type(exc).__name__}
        if spec.name in start_errors:
            status["start_error"] = start_errors[spec.name]
        statuses[spec.name] = status
    return statuses
