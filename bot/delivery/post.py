"""`prdigest post`: one week's digest to one channel now, through the schedule's ledger.

The same lock, ledger and delivery keys as the weekly schedule (`bot.delivery.schedule`), so a
post on demand and a scheduled post never both go out, and `--force` is the one way
to send a week again.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.poster import AdapterPoster, DigestAdapter
from adapters.registry import LOCAL_PLATFORMS, PLATFORMS
from bot.clock import SYSTEM_CLOCK
from bot.config import ChannelConfig, Config, secret
from bot.delivery.results import PostResult
from bot.delivery.schedule import Scheduler
from bot.digests import Digests
from bot.errors import ConfigError, UserError
from bot.pacing import Pacer
from bot.snapshot import snapshots_for
from bot.source import SnapshotSource, Source
from bot.store.claims import Claims
from bot.store.coordination import StoreUnavailable
from bot.store.ledger import Ledger, LedgerEntry, Slot, next_delivery_key
from bot.store.memory import MemoryCoordination
from bot.store.pacing import SharedPacer
from bot.store.redis.client import parse as parse_redis_url
from bot.store.redis.coordination import RedisCoordination
from bot.week import past_week, resolve_week
from bot.wiring import ProcessDigests

# Every platform a channel may be posted to: the registry, imported lazily per platform.
ADAPTERS = {spec.name: spec for spec in PLATFORMS}


def find_channel(config: Config, key: str, repo: str) -> ChannelConfig:
    """The configured channel `platform:id` that follows `repo` (alone or among others)."""
    platform, _, channel_id = key.partition(":")
    if not platform or not channel_id:
        raise UserError(f"--channel {key!r}: expected platform:id, a channel's `platform` "
                        "and `id` in the config's [[channels]]")
    matches = [c for c in config.channels if c.key == key]
    for channel in matches:
        if channel.follows(repo):
            return channel
    if matches:
        follows = ", ".join(sorted(name for c in matches for name in c.repositories))
        raise UserError(f"channel {key} follows {follows}, not {repo}")
    raise UserError(f"channel {key} is not in the config's [[channels]]")


def checked_week(text: str, channel: ChannelConfig) -> str:
    """The ISO week, normalised (`last` and `this` in the channel's time zone, where
    its schedule runs); a week that has not started yet is refused."""
    now = SYSTEM_CLOCK.now()
    return past_week(resolve_week(text, now, channel.timezone), now, channel.timezone)


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
        factory = spec.load()
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


def post_source(config: Config, channel: ChannelConfig, snapshots: Sequence[Path],
                live: Source | None = None) -> Source:
    """The channel's snapshot files, else `live`, else GitHub behind the cache the
    environment names."""
    if snapshots:
        return SnapshotSource(*snapshots_for(channel.repositories, snapshots))
    if live is not None:
        return live
    from bot.store.cache import live_source

    return live_source(config)


@dataclass(frozen=True)
class DryRun:
    """What `post --dry-run` found: the channel and week, the platform's requests as
    JSON, and what the ledger says of the slot (empty when it was not read)."""

    channel: ChannelConfig
    week: str
    requests: str
    ledger: str = ""


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
    entry, ledger = await _ledger_entry(slot, url, config.cache.url_env)
    source = post_source(config, channel, snapshots, live)
    async with ProcessDigests(config, source, redis_url=url, llm=llm) as digests:
        digest = await digests.for_channel(channel, week)
    key = next_delivery_key(slot, entry, force=force)
    if entry is not None and entry.state in ("posted", "held") and not force:
        ledger = (f"the ledger has it {entry.state}: post would send nothing without "
                  "--force")
    return DryRun(channel, week, preview_json(channel.platform, channel.id, digest, key=key),
                  ledger)


async def _ledger_entry(slot: Slot, url: str | None, variable: str
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


def describe(result: PostResult) -> str:
    """One line about what `post` did."""
    where = f"{result.week} of {result.repo} to {result.channel}"
    ids = ", ".join(result.message_ids)
    if result.status == "posted":
        return f"posted {where} ({len(result.message_ids)} message(s): {ids})"
    if result.status == "already-posted":
        return (f"{where} was already posted ({result.detail}; message(s): {ids}); "
                "--force sends it again")
    if result.status == "held":
        return f"{where} is held: {result.detail}"
    if result.status == "busy":
        return f"{where} is being posted by another replica right now; try again shortly"
    return f"posting {where} failed: {result.detail}"
