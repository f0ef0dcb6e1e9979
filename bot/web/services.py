"""Everything the routes and the lifespan share: a `serve` process (`bot.compose`) with
what the web server adds - /metrics and /healthz listening to its events, report
pages' limits, the lifespan's tasks, reloading the config file.

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
from pathlib import Path
from typing import Any

from starlette.requests import Request

from adapters.base import ChatAdapter
from adapters.registry import PLATFORMS, load_settings
from bot.clock import SYSTEM_CLOCK, Clock
from bot.compose import Process, compose
from bot.config import Config, secret
from bot.delivery.poller import ClosedLister
from bot.delivery.schedule import ScheduleSettings
from bot.errors import ConfigError
from bot.events import Events
from bot.links import REPORT_SECRET_ENV
from bot.live import describe_changes, restart_sections
from bot.models import Digest
from bot.source import Source
from bot.store.redis.cache import Cache
from bot.store.redis.safety import judge
from bot.web.github_health import GitHubHealth
from bot.web.metrics import Metrics
from bot.web.throttle import Allowance, ClientRate, SingleFlight

log = logging.getLogger(__name__)


@dataclass
class Services:
    """A `serve` process (`bot.compose`) and what only the web server adds to it:
    /metrics, /healthz, report pages' limits, the lifespan's tasks. One per app, no
    globals.

    `process.live`: the config in force (the file and the chats set up from chat);
    with `config_file`, SIGHUP (and `prdigest reload`) reads that file again."""

    process: Process
    metrics: Metrics
    # The Redis cache without /metrics counting its lookups (the page budget's).
    cache: Cache | None = None
    webhook_secret: str | None = None
    report_secret: str | None = None
    background: bool = True
    github_health: GitHubHealth = field(default_factory=GitHubHealth)
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
        return self.process.live.current

    # --- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Start the adapters, then the scheduler and the poller as background tasks.

        An adapter that fails to start (its platform unreachable) is logged and shown
        in /healthz; the rest of the service runs on.
        """
        self.stop_event = asyncio.Event()
        self.stopping = False
        if self.process.port.shared:
            # Once, at start: without EVAL the locks cannot work; say so in /healthz
            # (503) instead of failing every post while the slot locks linger.
            self.redis_problem = await self.process.port.problem()
            if self.redis_problem is not None:
                log.error("redis: %s; the weekly schedule is not started",
                          self.redis_problem)
            self.redis_hazards = await self.process.port.hazards()
            judge(self.redis_hazards, "warn")  # `refuse` stopped `prdigest serve` before
        for platform, adapter in self.process.adapters.items():
            try:
                await adapter.start()
            except Exception as exc:
                log.exception("%s did not start", platform)
                self.start_errors[platform] = f"{type(exc).__name__}: {exc}"
        self.started = True
        self._listen_for_reloads()
        if not self.background:
            return
        if self.process.live.store is not None:
            self.tasks["chat-settings"] = asyncio.create_task(
                self.process.live.keep_fresh(self.stop_event), name="prdigest-chat-settings")
        if self.process.port.shared:
            self.tasks["claims"] = asyncio.create_task(
                self.process.claims.keep_alive(self.stop_event), name="prdigest-claims-alive")
        if self.process.scheduler is not None and self.redis_problem is None:
            self.tasks["scheduler"] = asyncio.create_task(
                self.process.scheduler.run_forever(self.stop_event), name="prdigest-scheduler")
        if self.process.poller is not None:
            self.tasks["poller"] = asyncio.create_task(
                self.process.poller.run_forever(self.stop_event), name="prdigest-merge-poller")
        if self.process.flusher is not None:
            self.tasks["notice-batches"] = asyncio.create_task(
                self.process.flusher.run_forever(self.stop_event), name="prdigest-notice-batches")

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
        for platform, adapter in reversed(list(self.process.adapters.items())):
            try:
                await adapter.close()
            except Exception:
                log.exception("%s did not close cleanly", platform)
        await self.process.close()
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
        before = self.process.live.file
        self.process.live.replace_file(fresh)
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
        if not self.process.port.shared:
            return {"configured": False, "ok": False,
                    "note": f"set {self.config.cache.url_env} for the cache, subscriptions "
                            "and the weekly schedule"}
        if self.redis_problem is not None:
            return {"configured": True, "ok": False, "error": "NoScripting",
                    "reason": self.redis_problem}
        health = await self.process.port.health(timeout=2)
        if not health.ok and health.masters is None:
            return {"configured": True, "ok": False, "error": health.error}
        hazards = {"hazards": self.redis_hazards} if self.redis_hazards else {}
        return {"configured": True, "ok": health.ok,
                **({} if health.error is None else {"error": health.error}),
                **({} if health.masters is None else {"cluster": {"masters": health.masters}}),
                **hazards}

    def narrator_status(self) -> dict[str, Any]:
        """/healthz's view of the optional narrator: off, or its model and circuit."""
        if self.process.narrator is None:
            return {"configured": False}
        return {"configured": True, **self.process.narrator.status()}

    def platform_status(self) -> dict[str, Any]:
        return platform_statuses(self.config, self.process.adapters, self.start_errors)

    def platform_readiness(self) -> dict[str, dict[str, Any]]:
        """/readyz's view of the platforms whose secrets are set: each needs its adapter.
        A start error (the platform unreachable at start) is shown, not failed on: the
        adapter tries again with the next delivery, and the other platforms' webhooks
        must keep reaching this replica meanwhile."""
        ready: dict[str, dict[str, Any]] = {}
        for spec in PLATFORMS:
            if spec.name not in self.process.adapters and not spec.has_credentials(self.config):
                continue
            state: dict[str, Any] = {"ok": spec.name in self.process.adapters}
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
        if self.process.scheduler is None:
            scheduler = {"enabled": False, "reason": "the weekly schedule needs Redis"}
        else:
            scheduler = {"enabled": True, "task": task_state("scheduler"),
                         **self.process.scheduler.status()}
            if self.redis_problem is not None:
                scheduler["reason"] = self.redis_problem
        poll: dict[str, Any] = {} if self.process.poller is None else {
            "task": task_state("poller"),
            "every_minutes": self.process.poller.interval_seconds / 60,
            "rounds": self.process.poller.polls, "announced": self.process.poller.announced,
            "paused_by_rate_limit": self.process.poller.paused}
        if self.webhook_secret:
            notices: dict[str, Any] = {"mode": "webhook", "route": "/github/webhook"}
            if poll:
                notices["reconcile"] = poll
        elif self.process.poller is not None:
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
    schedule: ScheduleSettings | None = None,
) -> Services:
    """The web server on a `serve` process (`bot.compose.compose`, which the options but
    `background`, `metrics` and `config_file` go to): /metrics and /healthz listen to
    the process's events. `background=False` starts no schedule, poller or batches
    (tests drive them). `config_file`: where `config` was read from; SIGHUP reads it
    again (`Services.reload`)."""
    metrics = metrics or Metrics(platforms=[spec.name for spec in PLATFORMS])
    github_health = GitHubHealth(clock)
    # The core tells what happens as events; /metrics and /healthz count them.
    events = Events()
    events.subscribe(metrics.on)
    events.subscribe(github_health.on)
    process = compose(config, "serve", source=source, redis_url=redis_url, clock=clock,
                      llm=llm, events=events, adapters=adapters,
                      adapter_overrides=adapter_overrides, pull_lister=pull_lister,
                      schedule=schedule)
    client = process.cache.client if process.cache is not None else None
    return Services(
        process=process, metrics=metrics, config_file=config_file,
        cache=Cache(client, clock=clock) if client is not None else None,
        webhook_secret=secret(config.github.webhook_secret_env),
        report_secret=secret(REPORT_SECRET_ENV),
        background=background, github_health=github_health,
        report_rate=ClientRate(config.server.report_requests_per_minute, clock=clock),
        report_points=Allowance(config.server.report_points_per_hour, clock=clock),
    )


def services_of(request: Request) -> Services:
    """The services of the app serving `request`."""
    services: Services = request.app.state.services
    return services


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
