"""`prdigest post` composed: the channel's platform adapter (built for posting only),
the schedule's ledger and lanes in the Redis `REDIS_URL` names, and the process's one
`Digests`, put together with the rules of `bot.delivery.post`. One of the composition
roots: the CLI module that imports the adapters a post goes through."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from pathlib import Path

from adapters.poster import AdapterPoster, DigestAdapter
from adapters.registry import LOCAL_PLATFORMS, PLATFORMS
from bot.config import Config, secret
from bot.delivery.post import DryRun, checked_week, find_channel, post_source
from bot.delivery.results import PostResult
from bot.delivery.schedule import Scheduler
from bot.digests import Digests
from bot.errors import ConfigError, UserError
from bot.pacing import Pacer
from bot.source import Source
from bot.store.claims import Claims
from bot.store.coordination import StoreUnavailable
from bot.store.ledger import Ledger, LedgerEntry, Slot, next_delivery_key
from bot.store.memory import MemoryCoordination
from bot.store.pacing import SharedPacer
from bot.store.redis.client import parse as parse_redis_url
from bot.store.redis.coordination import RedisCoordination
from bot.wiring import ProcessDigests

# Every platform a channel may be posted to: the registry, imported lazily per platform.
ADAPTERS = {spec.name: spec for spec in PLATFORMS}


def adapter_for(digests: Digests, platform: str, *, pacer: Pacer | None = None
                ) -> DigestAdapter:
    """The platform's adapter as the server would build it, for posting only: it asks
    only for the secrets a post uses (no signing secret, webhook secret or app token).
    Its posts take their turns on `pacer` (the server's replicas' lanes, `SharedPacer`;
    without one, this process's own)."""
    from bot.chat.handler import CommandHandler

    config = digests.config
    if platform in LOCAL_PLATFORMS:
        raise UserError(f"{platform} channels print; they are not posted to")
    spec = ADAPTERS.get(platform)
    if spec is None:
        raise UserError(f"{platform} is not a chat platform prdigest posts to")
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
                                  outbound_only=True, pacer=pacer)
    if adapter is None:
        raise ConfigError(f"{platform} is not configured in this environment")
    return adapter


async def post_now(
    config: Config, repo: str, week: str, channel_key: str, *, force: bool = False,
    snapshots: Sequence[Path] = (), adapter: DigestAdapter | None = None,
    redis_url: str | None = None, llm: bool = True, live: Source | None = None,
) -> PostResult:
    """Post `week` of `repo` to the channel through the ledger; what happened comes back.

    The process's one `Digests` (its subscriptions and narrator in the same Redis as
    the ledger) builds the digest, as the schedule's does. `adapter` and `redis_url`
    replace what the config and environment name (tests); `llm=False` keeps the narrator
    off (`--no-llm`); `live` is where PRs come from without `snapshots` (default: GitHub
    behind the cache).
    """
    channel = find_channel(config, channel_key, repo)
    week = checked_week(week, channel)
    url = redis_url or secret(config.cache.url_env)
    if not url:
        raise ConfigError(f"set {config.cache.url_env}: posts go through the delivery "
                          "ledger in Redis, shared with the weekly schedule")
    parse_redis_url(url, config.cache.url_env)  # a malformed URL fails before anything else
    source = post_source(config, channel, snapshots, live)
    async with ProcessDigests(config, source, redis_url=url, llm=llm) as digests:
        port = RedisCoordination.from_url(url, config.cache.url_env)
        target: DigestAdapter | None = adapter
        try:
            # The post takes its turn in the lanes the server's replicas share.
            target = target or adapter_for(digests, channel.platform,
                                           pacer=SharedPacer(port, clock=digests.clock))
            # A digest built from a local file is not shared with the schedule's replicas.
            scheduler = Scheduler(digests, port, AdapterPoster({channel.platform: target}),
                                  replica=f"cli-{socket.gethostname()}-{os.getpid()}",
                                  share_digests=not snapshots, clock=digests.clock)
            return await scheduler.post(channel, week, force=force)
        finally:
            await port.close()
            if adapter is None and target is not None:
                await target.close()


async def dry_run_post(config: Config, repo: str, week: str, channel_key: str, *,
                       snapshots: Sequence[Path] = (), llm: bool = True, force: bool = False,
                       live: Source | None = None) -> DryRun:
    """What `post` would send, without sending: the digest `post` builds - the channel's
    configured topics first, then those subscribed in chat when `REDIS_URL` names the
    Redis they live in - as the requests the platform would receive, with the delivery
    key the send would carry (the ledger's, when it can be read). It needs no platform
    secret."""
    from adapters.preview import preview_json

    channel = find_channel(config, channel_key, repo)
    if channel.platform in LOCAL_PLATFORMS:
        raise UserError(f"{channel.platform} channels print; they are not posted to")
    week = checked_week(week, channel)
    url = secret(config.cache.url_env)
    if url:
        parse_redis_url(url, config.cache.url_env)
    slot = Slot(week, channel.key, channel.scope)
    entry, ledger = await ledger_entry(slot, url, config.cache.url_env)
    source = post_source(config, channel, snapshots, live)
    async with ProcessDigests(config, source, redis_url=url, llm=llm) as digests:
        digest = await digests.for_channel(channel, week)
    key = next_delivery_key(slot, entry, force=force)
    if entry is not None and entry.state in ("posted", "held") and not force:
        ledger = (f"the ledger has it {entry.state}: post would send nothing without "
                  "--force")
    return DryRun(channel, week, preview_json(channel.platform, channel.id, digest, key=key),
                  ledger)


async def ledger_entry(slot: Slot, url: str | None, variable: str
                        ) -> tuple[LedgerEntry | None, str]:
    """The slot's ledger entry when Redis is named and answers, and a note when it does
    not (the preview then shows a first delivery's key)."""
    if not url:
        return None, ""
    port = RedisCoordination.from_url(url, variable)
    try:
        return await Ledger(port).get(slot), ""
    except StoreUnavailable as exc:
        return None, (f"the ledger could not be read ({exc.reason}); shown as a "
                      "first delivery")
    finally:
        await port.close()
