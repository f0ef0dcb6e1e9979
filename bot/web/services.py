"""Everything the routes and the lifespan share, and the one place that wires it: the
composition root of the service.

A platform whose secrets are not in the environment is simply off (shown in
`/healthz`), so the example config starts anywhere. Without Redis the bot still
answers and serves reports, uncached; subscriptions, the weekly schedule and
cross-replica dedupe need it, and `/healthz` says so. Platforms come from
`adapters.registry`; nothing here names one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from starlette.requests import Request

from adapters.base import ChatAdapter, DeliveryError
from adapters.poster import AdapterPoster
from adapters.registry import PLATFORMS, load_settings
from bot.chat.handler import CommandHandler
from bot.chat.inbound import CommandAnswering, FirstSeen
from bot.chat.intents import intent_reader
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ChannelConfig, Config, secret
from bot.delivery.batches import BatchFlusher
from bot.delivery.notices import MergeNotifier
from bot.delivery.poller import ClosedLister, MergePoller
from bot.delivery.schedule import Scheduler
from bot.digests import Digests
from bot.errors import ConfigError
from bot.events import Events
from bot.github.budget import RateLimit
from bot.github.closed import poll_lister
from bot.github.pool import PooledSource, github_source
from bot.github.source import GitHubSource
from bot.links import REPORT_SECRET_ENV
from bot.live import LiveConfig, describe_changes, restart_sections
from bot.models import Digest, Reply
from bot.narrate import Narrator, narrator_for
from bot.pacing import LocalPacer, Pacer
from bot.source import Source
from bot.store.cache import CachedSource
from bot.store.claims import Claims
from bot.store.coordination import Coordination
from bot.store.memory import MemoryCoordination
from bot.store.mutes import Mutes
from bot.store.pacing import SharedPacer
from bot.store.redis.cache import Cache
from bot.store.redis.chat_settings import RedisChatSettings
from bot.store.redis.client import sync_client
from bot.store.redis.coordination import RedisCoordination
from bot.store.redis.review_queues import RedisReviewQueueStore
from bot.store.redis.safety import judge
from bot.store.redis.subscriptions import RedisSubscriptionStore
from bot.store.review_queues import ReviewQueues
from bot.web.github_health import GitHubHealth
from bot.web.metrics import Metrics
from bot.web.throttle import Allowance, ClientRate, SingleFlight

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Everything the routes and the lifespan share; one per app, no globals.

    `live`: the config in force (the file and the chats set up from chat); with
    `config_file`, SIGHUP (and `prdigest reload`) reads that file again."""

    live: LiveConfig
    metrics: Metrics
    source: Source
    handler: CommandHandler
    claims: Claims
    digests: Digests
    notifier: MergeNotifier
    adapters: dict[str, ChatAdapter]
    port: Coordination = field(default_factory=MemoryCoordination)
    cache: Cache | None = None
    github: GitHubSource | PooledSource | None = None
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
    # What the start-up check found wrong with Redis (eviction, persistence).
    redis_hazards: list[str] = field(default_factory=list)
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    pending: set[asyncio.Task[Any]] = field(default_factory=set)
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)
    # Report pages are open to anyone: one build per (repo, week, lang), so many a minute.
    report_builds: SingleFlight[tuple[str, str, str], Digest] = field(
        default_factory=SingleFlight)
    report_rate: ClientRate | None = None
    report_points: Allowance | None = None
    # For /readyz: the lifespan has started everything, and has not begun to stop.
    started: bool = False
    stopping: bool = False
    config_file: Path | None = None
    reloads: int = 0

    @property
    def config(self) -> Config:
        """The config in force (a reload or a chat's settings change it)."""
        return self.live.current

    # --- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Start the adapters, then the scheduler and the poller as background tasks.

        An adapter that fails to start (its platform unreachable) is logged and shown
        in /healthz; the rest of the service runs on.
        """
        self.stop_event = asyncio.Event()
        self.stopping = False
        if self.port.shared:
            # Once, at start: without EVAL the locks cannot work; say so in /healthz
            # (503) instead of failing every post while the slot locks linger.
            self.redis_problem = await self.port.problem()
            if self.redis_problem is not None:
                log.error("redis: %s; the weekly schedule is not started",
                          self.redis_problem)
            self.redis_hazards = await self.port.hazards()
            judge(self.redis_hazards, "warn")  # `refuse` stopped `prdigest serve` before
        for platform, adapter in self.adapters.items():
            try:
                await adapter.start()
            except Exception as exc:
                log.exception("%s did not start", platform)
                self.start_errors[platform] = f"{type(exc).__name__}: {exc}"
        self.started = True
        self._listen_for_reloads()
        if not self.background:
            return
        if self.live.store is not None:
            self.tasks["chat-settings"] = asyncio.create_task(
                self.live.keep_fresh(self.stop_event), name="prdigest-chat-settings")
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
        self.stopping = True
        self.stop_event.set()
        self._stop_listening_for_reloads()
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

    # --- reloading the config file -----------------------------------------------------

    async def reload(self) -> bool:
        """Read the config file again: a valid one takes effect at once (channels,
        repositories, `[chat]`; nothing connected is dropped, no post in flight is
        touched), an invalid one is refused with one log line naming the field and the
        running config stays. Whether it took effect. The file is read in a worker
        thread; the new config is put in force on the event loop, between two of its
        steps, so no part sees half of it."""
        if self.config_file is None:
            return False
        try:
            fresh = await asyncio.to_thread(load_settings, self.config_file)
        except ConfigError as exc:
            log.error("config reload refused, the running config stays: %s", exc)
            return False
        before = self.live.file
        self.live.replace_file(fresh)
        self.reloads += 1
        log.info("config reloaded from %s: %d channel(s) in the file, %d in all; %s",
                 self.config_file, len(fresh.channels), len(self.config.channels),
                 describe_changes(before, fresh))
        later = restart_sections(before, fresh)
        if later:
            log.warning("config reload: %s changed; those take effect at the next restart",
                        ", ".join(f"[{name}]" for name in later))
        return True

    def _listen_for_reloads(self) -> None:
        """SIGHUP reloads the config file (when there is one and this is the main
        thread's loop: a server run in-process by a test has no signals)."""
        if self.config_file is None:
            return
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self._hangup)
        except (RuntimeError, ValueError, NotImplementedError):
            log.info("SIGHUP is not listened for here; the config is not reloaded by it")

    def _stop_listening_for_reloads(self) -> None:
        if self.config_file is None:
            return
        with contextlib.suppress(RuntimeError, ValueError, NotImplementedError):
            asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)

    def _hangup(self) -> None:
        self.track(asyncio.ensure_future(self.reload()))

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
        if not health.ok and health.masters is None:
            return {"configured": True, "ok": False, "error": health.error}
        hazards = {"hazards": self.redis_hazards} if self.redis_hazards else {}
        return {"configured": True, "ok": health.ok,
                **({} if health.error is None else {"error": health.error}),
                **({} if health.masters is None else {"cluster": {"masters": health.masters}}),
                **hazards}

    def narrator_status(self) -> dict[str, Any]:
        """/healthz's view of the optional narrator: off, or its model and circuit."""
        if self.narrator is None:
            return {"configured": False}
        return {"configured": True, **self.narrator.status()}

    def platform_status(self) -> dict[str, Any]:
        return platform_statuses(self.config, self.adapters, self.start_errors)

    def platform_readiness(self) -> dict[str, dict[str, Any]]:
        """/readyz's view of the platforms whose secrets are set: each needs its adapter.
        A start error (the platform unreachable at start) is shown, not failed on: the
        adapter tries again with the next delivery, and the other platforms' webhooks
        must keep reaching this replica meanwhile."""
        ready: dict[str, dict[str, Any]] = {}
        for spec in PLATFORMS:
            if spec.name not in self.adapters and not spec.has_credentials(self.config):
                continue
            state: dict[str, Any] = {"ok": spec.name in self.adapters}
            if spec.name in self.start_errors:
                state["start_error"] = self.start_errors[spec.name]
            ready[spec.name] = state
        return ready

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
    config_file: Path | None = None,
) -> Services:
    """Wire the parts for one app: the one `Digests` (config, source, subscriptions,
    narrator, clock) that chat, the schedule, notices and report pages all share.

    `source`: where PRs come from (default: GitHub behind the Redis cache).
    `adapters`: ready adapters by platform (default: each platform's `from_config`,
    with `adapter_overrides[platform]` passed on, e.g. a fake server's URL).
    `pull_lister`: what the merge poller asks (default: the GitHub source's REST list).
    `llm=False` keeps the narrator off even when `[llm]` is configured (`--no-llm`).
    `config_file`: where `config` was read from; SIGHUP reads it again (`Services.reload`).
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
    counted = Cache(client, events=events, clock=clock) if client is not None else None
    live = LiveConfig(config, RedisChatSettings(client) if client is not None else None,
                      clock=clock)
    github: GitHubSource | PooledSource | None = None
    if source is None:
        # One credential, or a pool of tokens and App installations (`bot.github.pool`);
        # /metrics shows what all of them have left.
        def points(rate: RateLimit) -> None:
            left = github.budget.remaining if github is not None else None
            metrics.github_points(rate.cost, rate.remaining if left is None else left,
                                  rate.reset_at.timestamp())

        github = github_source(live, on_update=points, on_request=on_github_request,
                               clock=clock)
        source = CachedSource(github, counted, live, events=events, clock=clock)
        if pull_lister is None:
            pull_lister = poll_lister(github, on_request=on_github_request)
    store = RedisSubscriptionStore(client) if client is not None else None
    digest_store = counted
    narrator = narrator_for(config, digest_store, events=metrics, enabled=llm, clock=clock)
    digests = Digests(live, source, subscriptions=store, reports=digest_store, clock=clock,
                      events=events, narrator=narrator)
    queues = ReviewQueues(RedisReviewQueueStore(client) if client is not None else None,
                          clock=clock)
    # Chats' notice mutes: in the store the replicas share (notices read them there).
    mutes = Mutes(port, clock=clock) if port.shared else None
    handler = CommandHandler(
        digests, live=live, lookups=github, queues=queues, intents=intent_reader(narrator, clock),
        points_short=github.budget.short_of if github is not None else None, events=events,
        mutes=mutes)
    claims = Claims(port, clock=clock)
    if adapters is None:
        # Posts take their turns in lanes every replica shares (in this process alone
        # without Redis).
        pacer = SharedPacer(port, clock=clock) if port.shared else LocalPacer(clock)
        adapters = build_adapters(config, handler, claims, adapter_overrides, pacer=pacer)
    adapter_map = dict(adapters)
    notifier = MergeNotifier(digests, claims, AdapterNotices(adapter_map), events=events,
                             clock=clock, mutes=mutes)
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
        poller = MergePoller(live, pull_lister, claims, notifier, clock=clock,
                             interval_seconds=every * 60.0)
    flusher = None
    if notifier.batches is not None:
        # Always there with Redis: a reload may give a channel notice batches.
        flusher = BatchFlusher(live, notifier, notifier.batches, claims, clock=clock)
    return Services(
        live=live, config_file=config_file, metrics=metrics, source=source, handler=handler,
        claims=claims, digests=digests, notifier=notifier, adapters=adapter_map,
        port=port, cache=Cache(client, clock=clock) if client is not None else None,
        github=github,
        scheduler=scheduler, poller=poller, flusher=flusher, webhook_secret=webhook_secret,
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
        adapter = spec.adapter().from_config(config, handler, deduper,
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
