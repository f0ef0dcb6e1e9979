"""What the CLI knows of the chat platforms, all from the registry: the config file checked
by each platform, the formats a preview can take (one per platform), the console adapter
that answers at the terminal, and previews of the requests a platform would receive. The
only CLI module that imports adapters."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from adapters.registry import PLATFORMS
from bot.cli.app import Language
from bot.config import Config
from bot.errors import UserError
from bot.models import Digest, Reply
from bot.snapshot import check_repository, data_time, read_snapshot
from bot.source import SnapshotSource, Source

if TYPE_CHECKING:
    from adapters.console import ConsoleAdapter


class ReplyFormat(StrEnum):
    text = "text"
    markdown = "markdown"


# Formats that print the requests a chat platform would receive (`adapters.preview`):
# one per platform of the registry, named as the platform is.
PLATFORM_FORMATS: tuple[str, ...] = tuple(spec.name for spec in PLATFORMS)
DIGEST_FORMATS = ("markdown", "text", "json", *PLATFORM_FORMATS)
ASK_FORMATS = ("text", "markdown", *PLATFORM_FORMATS)

if TYPE_CHECKING:
    class DigestFormat(StrEnum):
        """`--format` of `digest`: its members are `DIGEST_FORMATS`, made at run time."""

    class AskFormat(StrEnum):
        """`--format` of `ask`: its members are `ASK_FORMATS`, made at run time."""
else:
    DigestFormat = StrEnum("DigestFormat", [(name, name) for name in DIGEST_FORMATS])
    AskFormat = StrEnum("AskFormat", [(name, name) for name in ASK_FORMATS])
MARKDOWN = DigestFormat("markdown")
# Each platform and what its channel ids look like, for the config `init` writes.
CHANNEL_ID_HINTS: tuple[tuple[str, str], ...] = tuple(
    (spec.name, spec.channel_id_hint) for spec in PLATFORMS)
TEXT = AskFormat("text")

_REQUESTS = f"{', '.join(PLATFORM_FORMATS)}: the requests that platform receives, as JSON"
DigestFormatOption = Annotated[DigestFormat, typer.Option(
    "--format", "-f",
    help="markdown: the full report; text: the plain chat text; json: the Digest JSON; "
         f"{_REQUESTS}.")]
AskFormatOption = Annotated[AskFormat, typer.Option(
    "--format", "-f", help=f"text: as chat shows it; markdown: the same in Markdown; "
                           f"{_REQUESTS}.")]


def load_settings(path: Path | None) -> Config:
    """The config file every command reads: each platform's channels and settings
    checked by the platform (`adapters.registry`)."""
    from adapters.registry import load_settings as load

    return load(path)


def preview_target(settings: Config, platform: str, repos: Sequence[str],
                   payload: Digest | Reply) -> tuple[str, str | None]:
    """Where a preview is addressed, and the delivery key a digest carries there.

    A digest goes to the configured channel of `platform` that gets exactly this digest
    (the same repositories in the same order, its language and chat form), with the
    key the schedule's first delivery of that week to it would carry; a reply to the
    first channel of `platform` following the repository. With no such channel, the
    placeholder id (and a digest the key a channel of that id would get)."""
    from adapters.preview import PLACEHOLDER_CHANNEL
    from bot.store.ledger import Slot

    wanted = tuple(name.lower() for name in repos)
    if isinstance(payload, Reply):
        channel = next((c for c in settings.channels
                        if c.platform == platform and c.follows(repos[0])), None)
        return (channel.id if channel else PLACEHOLDER_CHANNEL), None
    channel = next((c for c in settings.channels if c.platform == platform
                    and tuple(name.lower() for name in c.repositories) == wanted
                    and c.lang == payload.lang and c.chat_form == payload.chat_form), None)
    channel_id = channel.id if channel is not None else PLACEHOLDER_CHANNEL
    scope = channel.scope if channel is not None else ", ".join(repos)
    return channel_id, Slot(payload.week, f"{platform}:{channel_id}", scope).delivery_key(0)


@contextlib.contextmanager
def console_session(
    repo: str | None,
    snapshot_path: Path | None,
    config_path: Path | None,
    fmt: ReplyFormat,
    lang: Language | None,
) -> Iterator[ConsoleAdapter]:
    """A console adapter on the snapshot file or live GitHub, for the repository asked
    about, answering through the process's one `Digests` (subscriptions in the server's
    Redis when `REDIS_URL` names it, so the console subscribes like a chat does; the
    narrator when `[llm]` is configured); setup problems are `UserError`s (exit code 2)."""
    import asyncio
    import logging

    from adapters.console import ConsoleAdapter, console_channel
    from bot.clock import SYSTEM_CLOCK, Clock, HeldClock
    from bot.compose import compose
    from bot.config import secret

    # Why a reply says "data unavailable" (a missing token, a refused request) goes to
    # stderr: at a terminal the operator is the user.
    logging.basicConfig(level=logging.WARNING, format="prdigest: %(message)s")
    settings = load_settings(config_path)
    clock: Clock = SYSTEM_CLOCK
    source: Source
    if snapshot_path is not None:
        data = read_snapshot(snapshot_path)
        repo = repo or data.repository
        check_repository(data, repo, snapshot_path)
        source = SnapshotSource(data)
        moment = data_time(data)
        if moment is not None:
            # `digest` and `last week` are the data's weeks, not today's.
            clock = HeldClock(moment)
    else:
        consoles = [name for c in settings.channels if c.platform == "console"
                    for name in c.repositories]
        candidates = consoles or list(settings.repos)
        if repo is None and len(candidates) == 1:
            repo = candidates[0]
        if repo is None:
            raise UserError("name the repository with --repo owner/name")
        from bot.cli.live import LiveSource

        source = LiveSource(settings, clock=clock)
    channel = console_channel(settings, repo, lang.value if lang else "en")
    process = compose(settings, "chat", source=source, clock=clock,
                      redis_url=secret(settings.cache.url_env) or None)
    if process.handler is None:
        raise RuntimeError("a chat process answers through its handler")
    try:
        yield ConsoleAdapter(process.handler, channel, fmt=fmt.value,
                             lang=lang.value if lang else None)
    finally:
        asyncio.run(process.close())


def requests_json(platform: str, channel_id: str, payload: Digest | Reply, *,
                  key: str | None = None) -> str:
    """The requests `platform` would receive for `payload` sent to `channel_id` with
    the delivery key `key`, as JSON."""
    from adapters.preview import preview_json

    return preview_json(platform, channel_id, payload, key=key)


def print_preview(fmt: str, settings: Config, repos: Sequence[str],
                  payload: Digest | Reply) -> None:
    """The requests `fmt`'s platform would receive for `payload` (a digest of `repos`, or
    a reply about the first), as JSON on stdout: addressed and keyed as
    `preview_target` says."""
    channel_id, key = preview_target(settings, fmt, repos, payload)
    sys.stdout.write(requests_json(fmt, channel_id, payload, key=key))
