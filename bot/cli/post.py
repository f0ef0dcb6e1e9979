"""`prdigest post` run: a `post` process (`bot.compose`) - the channel's platform
adapter built for posting only, the schedule's ledger and lanes in the Redis `REDIS_URL`
names, the process's one `Digests` - put to work with the rules of
`bot.delivery.post`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.compose import DigestAdapter, check_postable, compose
from bot.config import Config, secret
from bot.delivery.post import DryRun, checked_week, find_channel, post_source
from bot.delivery.results import PostResult
from bot.errors import ConfigError
from bot.source import Source
from bot.store.coordination import StoreUnavailable
from bot.store.ledger import Ledger, LedgerEntry, Slot, next_delivery_key
from bot.store.redis.client import parse as parse_redis_url
from bot.store.redis.coordination import RedisCoordination


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
    # A digest built from a local file is not shared with the schedule's replicas.
    async with compose(config, "post", source=source, redis_url=url, llm=llm,
                       platform=channel.platform,
                       adapters=None if adapter is None else {channel.platform: adapter},
                       share_digests=not snapshots) as process:
        if process.scheduler is None:
            raise RuntimeError("a post process posts through its scheduler")
        return await process.scheduler.post(channel, week, force=force)


async def dry_run_post(config: Config, repo: str, week: str, channel_key: str, *,
                       snapshots: Sequence[Path] = (), llm: bool = True, force: bool = False,
                       live: Source | None = None) -> DryRun:
    """What `post` would send, without sending: the digest `post` builds - the channel's
    configured topics first, then those subscribed in chat when `REDIS_URL` names the
    Redis they live in - as the requests the platform would receive, with the delivery
    key the send would carry (the ledger's, when it can be read). It needs no platform
    secret."""
    from bot.cli.platforms import requests_json

    channel = find_channel(config, channel_key, repo)
    check_postable(channel.platform)
    week = checked_week(week, channel)
    url = secret(config.cache.url_env)
    if url:
        parse_redis_url(url, config.cache.url_env)
    slot = Slot(week, channel.key, channel.scope)
    entry, ledger = await ledger_entry(slot, url, config.cache.url_env)
    source = post_source(config, channel, snapshots, live)
    async with compose(config, "digest", source=source, redis_url=url, llm=llm) as process:
        digest = await process.digests.for_channel(channel, week)
    key = next_delivery_key(slot, entry, force=force)
    if entry is not None and entry.state in ("posted", "held") and not force:
        ledger = (f"the ledger has it {entry.state}: post would send nothing without "
                  "--force")
    return DryRun(channel, week, requests_json(channel.platform, channel.id, digest, key=key),
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
