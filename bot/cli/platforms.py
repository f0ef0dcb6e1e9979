"""What the CLI shows of the chat platforms: the console adapter that answers at the
terminal, and previews of the requests a platform would receive. The only CLI module
that imports adapters."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.app import Language
from bot.config import Config, load_config
from bot.errors import UserError
from bot.snapshot import check_repository, data_time, read_snapshot
from bot.source import SnapshotSource, Source

if TYPE_CHECKING:
    from adapters.console import ConsoleAdapter
    from bot.chat.handler import SubscriptionStore


class ReplyFormat(StrEnum):
    text = "text"
    markdown = "markdown"


def preview_channel(settings: Config, repo: str, platform: str) -> str:
    """The id a preview addresses: the first configured channel of that platform that
    follows `repo`, or a placeholder."""
    from adapters.preview import PLACEHOLDER_CHANNEL

    return next((c.id for c in settings.channels
                 if c.platform == platform and c.follows(repo)),
                PLACEHOLDER_CHANNEL)



def console_for(
    repo: str | None,
    snapshot_path: Path | None,
    config_path: Path | None,
    fmt: ReplyFormat,
    lang: Language | None,
) -> ConsoleAdapter:
    """A console adapter on the snapshot file or live GitHub, for the repository asked
    about; setup problems are `UserError`s (exit code 2)."""
    import logging

    from adapters.console import ConsoleAdapter, console_channel
    from bot.chat.handler import CommandHandler, utc_now

    # Why a reply says "data unavailable" (a missing token, a refused request) goes to
    # stderr: at a terminal the operator is the user.
    logging.basicConfig(level=logging.WARNING, format="prdigest: %(message)s")
    settings = load_config(config_path)
    now: Callable[[], datetime] = utc_now
    source: Source
    if snapshot_path is not None:
        data = read_snapshot(snapshot_path)
        repo = repo or data.repository
        check_repository(data, repo, snapshot_path)
        source = SnapshotSource(data)
        moment = data_time(data)
        if moment is not None:
            # `digest` and `last week` are the data's weeks, not today's.
            def now() -> datetime:
                return moment
    else:
        consoles = [name for c in settings.channels if c.platform == "console"
                    for name in c.repositories]
        candidates = consoles or list(settings.repos)
        if repo is None and len(candidates) == 1:
            repo = candidates[0]
        if repo is None:
            raise UserError("name the repository with --repo owner/name")
        from bot.store.cache import live_source

        source = live_source(settings)
    channel = console_channel(settings, repo, lang.value if lang else "en")
    handler = CommandHandler(settings, source, console_subscriptions(settings), now=now)
    return ConsoleAdapter(handler, channel, fmt=fmt.value, lang=lang.value if lang else None)


def console_subscriptions(settings: Config) -> SubscriptionStore | None:
    """The server's subscription store when its Redis is named (`REDIS_URL`), so the
    console subscribes like a chat does; without it, subscribing says it is unavailable."""
    from bot.config import secret

    url = secret(settings.cache.url_env)
    if not url:
        return None
    from bot.store.client import sync_client
    from bot.store.subscriptions import RedisSubscriptionStore

    return RedisSubscriptionStore(sync_client(url, settings.cache.url_env))




def print_preview(fmt: str, settings: Config, repo: str, payload: Any) -> None:
    """The requests `fmt`'s platform would receive for `payload` (a digest or a reply),
    as JSON on stdout."""
    from adapters.preview import preview_json

    sys.stdout.write(preview_json(fmt, preview_channel(settings, repo, fmt), payload))
