"""`prdigest serve` and `prdigest post`."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from bot.cli.app import (
    ConfigOption,
    NoLLMOption,
    SnapshotsOption,
    WeekOption,
    command,
    fail,
    user_errors,
)
from bot.cli.platforms import load_settings
from bot.config import Config
from bot.errors import UserError
from bot.models import Snapshot
from bot.snapshot import data_time, read_snapshot, read_snapshots


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


class LogFormatChoice(StrEnum):
    text = "text"
    json = "json"


@command()
@user_errors
def serve(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="TOML config file.", dir_okay=False)
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", help="Port to listen on.",
                                      min=1, max=65535)] = 8080,
    snapshot: Annotated[list[Path] | None, typer.Option(
        "--snapshot", "-s", envvar="PRDIGEST_SNAPSHOT", dir_okay=False, metavar="<file>",
        help="Read PRs from this snapshot file instead of GitHub (an offline demo); one "
             "file for every repository, or one per repository, each matched by the "
             "repository it holds.")] = None,
    log_level: Annotated[LogLevel, typer.Option(
        "--log-level", help="How much the log says.")
                         ] = LogLevel.info,
    log_format: Annotated[LogFormatChoice, typer.Option(
        "--log-format", envvar="PRDIGEST_LOG_FORMAT",
        help="Every log line, uvicorn's access lines included, as plain text or as one "
             "JSON object.")] = LogFormatChoice.text,
    no_llm: NoLLMOption = False,
    pid_file: Annotated[Path | None, typer.Option(
        "--pid-file", dir_okay=False, metavar="<file>",
        help="Write the server's process id here (`prdigest reload --pid-file` reads it)."
    )] = None,
) -> None:
    """Run the bot: chat webhooks, GitHub webhook, report pages, /healthz and /metrics.

    Platforms whose secrets are not in the environment stay off; with --snapshot every
    week and PR is read from the files instead of GitHub (a demo that runs offline).
    SIGHUP (or `prdigest reload`) reads the config file again without a restart.
    """
    import logging.config

    import uvicorn

    from bot.config import secret
    from bot.links import private_report_keys
    from bot.logs import log_config
    from bot.redaction import report_key_filters
    from bot.web.app import create_app
    from bot.web.connections import uvicorn_limits
    from bot.web.open_files import fit_open_files

    settings = load_settings(config)
    options: dict[str, Any] = {"redis_url": secret(settings.cache.url_env), "llm": not no_llm,
                               "config_file": config}
    if options["redis_url"] and settings.cache.unsafe_redis == "refuse":
        from bot.store.redis.safety import refuse_if_unsafe

        refuse_if_unsafe(options["redis_url"], settings.cache.url_env)
    if snapshot:
        from bot.clock import HeldClock
        from bot.source import SnapshotSource

        held = served_snapshots(settings, snapshot)
        moment = max((t for t in map(data_time, held) if t is not None), default=None)
        options["source"] = SnapshotSource(*held)
        if moment is not None:
            # "This week" means the snapshots' last week, as in `prdigest ask`.
            options["clock"] = HeldClock(moment)
    # One format for every line from here on; uvicorn applies the same again.
    logging_setup = log_config(log_format.value, log_level.value,
                               report_key_filters(private_report_keys(settings)))
    logging.config.dictConfig(logging_setup)
    try:
        server_app = create_app(settings, freeze_heap=True, **options)
    except ValueError as exc:
        # redis-py rejects a malformed URL with ValueError; name the variable, not its value.
        raise UserError(f"{settings.cache.url_env}: not a Redis URL ({exc})") from None
    limits = fit_open_files(settings.server)
    if pid_file is not None:
        write_pid_file(pid_file)
    uvicorn.run(server_app, host=host, port=port, log_level=log_level.lower(), lifespan="on",
                proxy_headers=True, log_config=logging_setup,
                **uvicorn_limits(limits))


def write_pid_file(path: Path) -> None:
    """This process's id in `path`, for `prdigest reload --pid-file`."""
    import os

    try:
        path.write_text(f"{os.getpid()}\n", encoding="ascii")
    except OSError as exc:
        raise UserError(f"{path}: cannot write the process id ({exc.strerror or exc})") \
            from None


def served_snapshots(settings: Config, paths: list[Path]) -> list[Snapshot]:
    """The files `serve` reads: one answers for every repository (a demo); several are
    matched by the repository each holds, which must be one the config lists."""
    if len(paths) == 1:
        return [read_snapshot(paths[0])]
    held = read_snapshots(paths)
    listed = {name.lower() for name in settings.repos}
    for path, data in zip(paths, held, strict=True):
        if data.repository.lower() not in listed:
            raise UserError(f"{path}: holds {data.repository}, which is not under [repos] "
                            "in the config")
    return held


@command()
@user_errors
def post(
    repo: Annotated[str, typer.Argument(help="Repository, owner/name.", metavar="OWNER/NAME")],
    week: WeekOption,
    channel: Annotated[str, typer.Option(
        "--channel", metavar="PLATFORM:ID",
        help="The configured channel as platform:id, its `platform` and `id` in the "
             "config's [[channels]].")],
    force: Annotated[bool, typer.Option(
        "--force", help="Send again even if the ledger says it was posted.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the requests the platform would receive and send nothing; "
        "needs no Redis and no secrets.")] = False,
    snapshot: SnapshotsOption = None,
    config: ConfigOption = None,
    no_llm: NoLLMOption = False,
) -> None:
    """Post REPO's digest of one week to one channel now, through the schedule's ledger
    (`--dry-run`: print what would be sent instead). A channel of several repositories
    gets its one digest of them all (with snapshots: one file per repository)."""
    import asyncio
    import logging

    from bot.cli.live import LiveSource
    from bot.cli.post import dry_run_post, post_now
    from bot.delivery.post import describe
    from bot.store.coordination import StoreUnavailable

    settings = load_settings(config)
    live = None if snapshot else LiveSource(settings)
    if dry_run:
        found = asyncio.run(dry_run_post(settings, repo, week, channel,
                                         snapshots=snapshot or (), llm=not no_llm,
                                         force=force, live=live))
        sys.stdout.write(found.requests)
        ledger = f"; {found.ledger}" if found.ledger else ""
        typer.echo(f"prdigest: dry run: {found.week} of {found.channel.scope} to "
                   f"{found.channel.key}; nothing was sent{ledger}", err=True)
        return

    # The outcome is the one line below; library chatter would only bury it.
    logging.basicConfig(level=logging.ERROR, format="prdigest: %(name)s: %(message)s")

    try:
        result = asyncio.run(post_now(settings, repo, week, channel, force=force,
                                      snapshots=snapshot or (), llm=not no_llm, live=live))
    except StoreUnavailable as exc:
        fail(f"Redis ({settings.cache.url_env}) failed: {exc}; run it again once Redis "
             "answers (the ledger keeps a post from going out twice)")
    line = describe(result)
    if result.status == "failed":
        fail(line)
    if result.status in ("held", "busy"):
        typer.echo(f"prdigest: {line}", err=True)
        raise typer.Exit(code=1)
    typer.echo(line)
