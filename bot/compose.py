"""The one place a prdigest process is put together, for each of its roles.

`compose(config, role)` builds the parts a role needs and nothing more, so the same
`Digests` (config, source, subscriptions, narrator, clock), the same `Events` and the
same coordination port serve every part of a process:

- `digest`: the digests (subscribed topics and the narrator's answers in Redis, when
  it is named);
- `ask`, `chat`: the digests and a command handler;
- `post`: the digests, the delivery ledger in Redis, the channel's platform adapter
  (built for posting only) and a scheduler to post through;
- `serve`: everything - every configured platform, the scheduler, the merge notices,
  the poller and the notice batches.

What only a web server has (`/metrics`, `/healthz`, report pages) is built on top of a
`serve` process by `bot.web.services`; it listens to the process's events. This is the
composition root: the one module that builds the chat adapters.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from adapters.base import ChatAdapter
from adapters.poster import AdapterNotices, AdapterPoster, DigestAdapter
from adapters.registry import LOCAL_PLATFORMS, PLATFORMS, PlatformSpec
from bot.chat.handler import CommandHandler
from bot.chat.inbound import CommandAnswering, FirstSeen
from bot.chat.intents import intent_reader
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, secret
from bot.delivery.batches import BatchFlusher
from bot.delivery.notices import MergeNotifier
from bot.delivery.poller import ClosedLister, MergePoller
from bot.delivery.schedule import Scheduler, ScheduleSettings
from bot.digests import Digests
from bot.errors import ConfigError, UserError
from bot.events import Events, GitHubAnswered, GitHubPoints
from bot.github.budget import RateLimit
from bot.github.closed import poll_lister
from bot.github.pool import PooledSource, github_source
from bot.github.source import GitHubSource
from bot.live import LiveConfig
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
from bot.store.redis.subscriptions import RedisSubscriptionStore
from bot.store.review_queues import ReviewQueues

Role = Literal["serve", "post", "digest", "ask", "chat"]
ROLES: tuple[Role, ...] = ("serve", "post", "digest", "ask", "chat")

__all__ = ["ROLES", "DigestAdapter", "Process", "Role", "build_adapters", "check_postable",
           "compose", "outbound_adapter"]

log = logging.getLogger(__name__)


@dataclass
class Process:
    """The parts of one process. Parts a role does not use are None (or empty)."""

    role: Role
    live: LiveConfig
    clock: Clock
    events: Events
    source: Source
    digests: Digests
    port: Coordination
    claims: Claims
    narrator: Narrator | None = None
    # The Redis cache family (reports, subscriptions, chat settings); None without Redis.
    cache: Cache | None = None
    github: GitHubSource | PooledSource | None = None
    handler: CommandHandler | None = None
    adapters: dict[str, ChatAdapter] = field(default_factory=dict)
    notifier: MergeNotifier | None = None
    scheduler: Scheduler | None = None
    poller: MergePoller | None = None
    flusher: BatchFlusher | None = None
    # Whether `close` closes the adapters: a `post` process's own are never started.
    owns_adapters: bool = False

    @property
    def config(self) -> Config:
        """The config in force (a reload or a chat's settings change it)."""
        return self.live.current

    async def close(self) -> None:
        """Let go of what the process holds open: adapters, GitHub, the model client,
        the store. Adapters are closed by whoever started them (`bot.web.services`);
        a `post` process's own outbound adapter was never started, so it is closed here."""
        if self.owns_adapters:
            for adapter in self.adapters.values():
                await adapter.close()
        if self.github is not None:
            self.github.close()
        if self.poller is not None:
            self.poller.close()
        if self.narrator is not None:
            await self.narrator.close()
        await self.port.close()
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> Process:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def compose(
    config: Config,
    role: Role,
    *,
    source: Source | None = None,
    redis_url: str | None = None,
    clock: Clock = SYSTEM_CLOCK,
    llm: bool = True,
    events: Events | None = None,
    adapters: Mapping[str, ChatAdapter] | None = None,
    adapter_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    pull_lister: ClosedLister | None = None,
    platform: str | None = None,
    share_digests: bool = True,
    schedule: ScheduleSettings | None = None,
) -> Process:
    """The process `role` runs, on `config`.

    `source`: where PRs come from; a `serve` process without one reads GitHub behind
    the Redis cache, the others must be given one (a snapshot, or the live source of
    `bot.cli.live`). `redis_url`: the Redis the replicas share (None: this process
    coordinates with itself in memory and keeps no cache; `post` refuses to run
    without it). `llm=False` keeps the narrator off (`--no-llm`). `events`: where the
    process tells what happens (default: a new, unheard one).
    `serve` only: `adapters` replaces the platforms the config names (tests),
    `adapter_overrides[platform]` goes to a platform's `from_config`, and
    `pull_lister` is what the merge poller asks (default: GitHub's REST list), and
    `schedule` how this replica runs the schedule (default: `ScheduleSettings()`).
    `post` only: `platform` is the one to post to, or `adapters` the one to use;
    `share_digests=False` keeps a digest built from a local file out of the shared
    digests the replicas build.
    """
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    events = events or Events()
    if role == "post" and not redis_url:
        raise ConfigError(f"set {config.cache.url_env}: posts go through the delivery "
                          "ledger in Redis, shared with the weekly schedule")
    variable = config.cache.url_env
    port: Coordination = (RedisCoordination.from_url(redis_url, variable) if redis_url
                          else MemoryCoordination(clock))
    client = sync_client(redis_url, variable) if redis_url else None
    cache = Cache(client, events=events, clock=clock) if client is not None else None
    chat_settings = RedisChatSettings(client) if client is not None and role == "serve" else None
    live = LiveConfig(config, chat_settings, clock=clock)
    github: GitHubSource | PooledSource | None = None
    if source is None:
        if role != "serve":
            raise ValueError(f"a {role} process is given its source of PR data")
        github = _github(live, events, clock)
        source = CachedSource(github, cache, live, events=events, clock=clock)
        pull_lister = pull_lister or poll_lister(
            github, on_request=lambda api, status: events.emit(GitHubAnswered(api, status)))
    narrator = narrator_for(config, cache, events=events, enabled=llm, clock=clock)
    digests = Digests(live, source, clock=clock, events=events, narrator=narrator,
                      subscriptions=RedisSubscriptionStore(client) if client is not None
                      else None,
                      reports=cache if role == "serve" else None)
    claims = Claims(port, clock=clock)
    process = Process(role=role, live=live, clock=clock, events=events, source=source,
                      digests=digests, port=port, claims=claims, narrator=narrator,
                      cache=cache, github=github)
    if role in ("ask", "chat"):
        process.handler = CommandHandler(digests)
    elif role == "post":
        _posting(process, platform, adapters, share_digests)
    elif role == "serve":
        _serving(process, adapters, adapter_overrides, pull_lister, schedule)
    return process


def _github(live: LiveConfig, events: Events, clock: Clock) -> GitHubSource | PooledSource:
    """The service's GitHub: one credential, or a pool of tokens and App installations
    (`bot.github.pool`); what it answers and what all of them have left are events."""
    github: GitHubSource | PooledSource | None = None

    def points(rate: RateLimit) -> None:
        left = github.budget.remaining if github is not None else None
        events.emit(GitHubPoints(rate.cost, rate.remaining if left is None else left,
                                 rate.reset_at.timestamp()))

    github = github_source(
        live, on_update=points, clock=clock,
        on_request=lambda api, status: events.emit(GitHubAnswered(api, status)))
    return github


def _posting(process: Process, platform: str | None,
             adapters: Mapping[str, ChatAdapter] | None, share_digests: bool) -> None:
    """A `post` process: one platform's adapter, posting in the lanes the server's
    replicas share, and a scheduler of this process's own to post through."""
    if adapters is None:
        if platform is None:
            raise ValueError("a post process is given the platform it posts to")
        pacer = SharedPacer(process.port, clock=process.clock)
        adapters = {platform: outbound_adapter(process.digests, platform, pacer=pacer)}
        process.owns_adapters = True
    process.adapters = dict(adapters)
    schedule = ScheduleSettings(replica=f"cli-{socket.gethostname()}-{os.getpid()}",
                                share_digests=share_digests)
    process.scheduler = Scheduler(process.digests, process.port,
                                  AdapterPoster(process.adapters), schedule,
                                  clock=process.clock,
                                  events=process.events)


def _serving(process: Process, adapters: Mapping[str, ChatAdapter] | None,
             overrides: Mapping[str, Mapping[str, Any]] | None,
             pull_lister: ClosedLister | None, schedule: ScheduleSettings | None) -> None:
    """A `serve` process: chat on every configured platform, the weekly schedule (with
    Redis), merged-PR notices, the poller and the notice batches."""
    config, clock, events, port = process.config, process.clock, process.events, process.port
    client = process.cache.client if process.cache is not None else None
    github = process.github
    queues = ReviewQueues(RedisReviewQueueStore(client) if client is not None else None,
                          clock=clock)
    # Chats' notice mutes: in the store the replicas share (notices read them there).
    mutes = Mutes(port, clock=clock) if port.shared else None
    process.handler = CommandHandler(
        process.digests, live=process.live, lookups=github, queues=queues,
        intents=intent_reader(process.narrator, clock),
        points_short=github.budget.short_of if github is not None else None, events=events,
        mutes=mutes)
    if adapters is None:
        # Posts take their turns in lanes every replica shares (in this process alone
        # without Redis).
        pacer = SharedPacer(port, clock=clock) if port.shared else LocalPacer(clock)
        adapters = build_adapters(config, process.handler, process.claims, overrides,
                                  pacer=pacer, clock=clock)
    process.adapters = dict(adapters)
    process.notifier = MergeNotifier(process.digests, process.claims,
                                     AdapterNotices(process.adapters), events=events,
                                     clock=clock, mutes=mutes)
    if port.shared:
        process.scheduler = Scheduler(process.digests, port, AdapterPoster(process.adapters),
                                      schedule, events=events,
                                      budget=github.budget if github is not None else None,
                                      clock=clock)
    webhook_secret = secret(config.github.webhook_secret_env)
    if pull_lister is not None and (webhook_secret is None or config.github.reconcile_minutes):
        # With a webhook the poller reconciles: it announces what no delivery brought.
        every = (config.github.poll_minutes if webhook_secret is None
                 else config.github.reconcile_minutes)
        process.poller = MergePoller(process.live, pull_lister, process.claims,
                                     process.notifier, clock=clock,
                                     interval_seconds=every * 60.0)
    if process.notifier.batches is not None:
        # Always there with Redis: a reload may give a channel notice batches.
        process.flusher = BatchFlusher(process.live, process.notifier,
                                       process.notifier.batches, process.claims, clock=clock)


def outbound_adapter(digests: Digests, platform: str, *, pacer: Pacer | None = None
                     ) -> DigestAdapter:
    """The platform's adapter as the server would build it, for posting only: it asks
    only for the secrets a post uses (no signing secret, webhook secret or app token).
    Its posts take their turns on `pacer` (the server's replicas' lanes, `SharedPacer`;
    without one, this process's own)."""
    config = digests.config
    spec = check_postable(platform)
    try:
        factory = spec.adapter()
    except ImportError:
        raise UserError(f"the {platform} adapter is not available in this installation") \
            from None
    missing = spec.missing_post_env(config)
    if missing:
        raise ConfigError(f"{platform} is not configured in this environment: set "
                          f"{', '.join(missing)}")
    adapter = factory.from_config(config, CommandHandler(digests),
                                  Claims(MemoryCoordination(digests.clock)),
                                  outbound_only=True, pacer=pacer, clock=digests.clock)
    if adapter is None:
        raise ConfigError(f"{platform} is not configured in this environment")
    return adapter


def check_postable(platform: str) -> PlatformSpec:
    """The registered chat platform `platform` names; a local one (the console prints)
    or an unknown one is the user's error."""
    if platform in LOCAL_PLATFORMS:
        raise UserError(f"{platform} channels print; they are not posted to")
    spec = next((spec for spec in PLATFORMS if spec.name == platform), None)
    if spec is None:
        raise UserError(f"{platform} is not a chat platform prdigest posts to")
    return spec


def build_adapters(config: Config, handler: CommandAnswering, deduper: FirstSeen,
                   overrides: Mapping[str, Mapping[str, Any]] | None = None, *,
                   pacer: Pacer | None = None, clock: Clock = SYSTEM_CLOCK
                   ) -> dict[str, ChatAdapter]:
    """Each registered platform's adapter whose secrets are set, answering through
    `handler`, posting in its turns on `pacer` and keeping its time on `clock` (the
    process's); `overrides[platform]` go to its `from_config` (tests). A platform
    without credentials is not even imported."""
    overrides = overrides or {}
    built: dict[str, ChatAdapter] = {}
    for spec in PLATFORMS:
        if not spec.has_credentials(config):
            missing = spec.unconfigured_status(config).get("missing_env") or []
            log.info("%s off: %s not set", spec.name, ", ".join(missing) or "credentials")
            continue
        adapter = spec.adapter().from_config(config, handler, deduper,
                                             **{"pacer": pacer, "clock": clock,
                                                **overrides.get(spec.name, {})})
        if adapter is not None:
            built[spec.name] = adapter
    return built
