"""`prdigest reload` and `prdigest channels`: the running service's config, from outside.

`reload` checks the config file as `serve` would and, when it is valid, sends the
server SIGHUP (`serve` reads the file again without a restart); an invalid file is
refused here with the one line naming its field, and nothing is signalled. `channels`
lists what gets digests: the file's channels and the chats set up from chat (read from
Redis), each with its repositories, language, schedule and time zone.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Annotated

import typer

from bot.cli.app import ConfigOption, command, fail, user_errors
from bot.cli.platforms import load_settings
from bot.errors import UserError


@command()
@user_errors
def reload(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="The server's TOML config file.",
                           dir_okay=False)],
    pid: Annotated[int | None, typer.Option(
        "--pid", help="The server's process id (`docker compose exec`: 1).")] = None,
    pid_file: Annotated[Path | None, typer.Option(
        "--pid-file", dir_okay=False, metavar="<file>",
        help="The file `prdigest serve --pid-file` wrote.")] = None,
) -> None:
    """Check the config file, then have the running server read it again (SIGHUP):
    channels, repositories and `[chat]` change without a restart, connections and
    posts in flight are kept. A file with an error is refused here and nothing is sent."""
    load_settings(config)  # the one line naming the field, exit 2, when invalid
    target = pid if pid is not None else _pid_from(pid_file)
    try:
        os.kill(target, signal.SIGHUP)
    except ProcessLookupError:
        fail(f"no process {target} (is prdigest serve running?)")
    except PermissionError:
        fail(f"not allowed to signal process {target}")
    typer.echo(f"prdigest: {config} is valid; process {target} reloads it")


def _pid_from(path: Path | None) -> int:
    if path is None:
        raise UserError("say which server: --pid N or --pid-file F (serve --pid-file F)")
    try:
        return int(path.read_text(encoding="ascii").strip())
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValueError:
        raise UserError(f"{path}: not a process id") from None


@command()
@user_errors
def channels(
    config: ConfigOption = None,
    remove: Annotated[str | None, typer.Option(
        "--remove", metavar="PLATFORM:ID",
        help="Forget what a chat set up from chat (its repositories, schedule, language "
             "and time zone).")] = None,
) -> None:
    """List every channel: those of the config file and those set up from chat (with
    REDIS_URL), what each gets and when."""
    from bot.config import secret
    from bot.live import LiveConfig
    from bot.store.coordination import StoreUnavailable
    from bot.store.redis.chat_settings import RedisChatSettings
    from bot.store.redis.client import sync_client

    settings = load_settings(config)
    url = secret(settings.cache.url_env)
    store = RedisChatSettings(sync_client(url, settings.cache.url_env)) if url else None
    if remove is not None:
        if store is None:
            fail(f"set {settings.cache.url_env}: chats' own settings live in Redis")
        assert store is not None
        try:
            store.remove(remove)
        except StoreUnavailable as exc:
            fail(f"Redis ({settings.cache.url_env}) failed: {exc}")
        typer.echo(f"prdigest: {remove} forgot its settings made in chat")
        return
    live = LiveConfig(settings, store)
    note = ""
    if store is None:
        note = f"(without {settings.cache.url_env} only the file's channels are shown)"
    else:
        try:
            live.read_chats()
        except StoreUnavailable as exc:
            fail(f"Redis ({settings.cache.url_env}) failed: {exc}")
    rows = [("CHANNEL", "FROM", "REPOSITORIES", "LANG", "SCHEDULE", "TIMEZONE")]
    for channel in live.current.channels:
        rows.append((channel.key, live.origin(channel.key), channel.scope, channel.lang,
                     channel.schedule, channel.timezone))
    ignored = sorted(key for key in live.chats() if live.current.channel(key) is None)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths,
                                                                       strict=True)).rstrip())
    for key in ignored:
        typer.echo(f"{key}: set up from chat, but none of its repositories is allowed now "
                   "([chat] in the config file)")
    if note:
        typer.echo(note, err=True)
