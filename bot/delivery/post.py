"""`prdigest post`: one week's digest to one channel now, through the schedule's ledger.

The same lock, ledger and delivery keys as the weekly schedule (`bot.delivery.schedule`),
so a post on demand and a scheduled post never both go out, and `--force` is the one way
to send a week again. Here are the rules of it - which channel and week, where its PRs
come from, what the ledger says, what the command then says; the platform's adapter is
composed with them in `bot.cli.post`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.clock import SYSTEM_CLOCK
from bot.config import ChannelConfig, Config
from bot.delivery.results import PostResult
from bot.errors import UserError
from bot.snapshot import snapshots_for
from bot.source import SnapshotSource, Source
from bot.week import past_week, resolve_week


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
