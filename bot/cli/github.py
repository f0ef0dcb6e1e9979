"""`prdigest snapshot` and `prdigest init`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli.app import (
    ConfigOption,
    LangOption,
    Language,
    SnapshotOption,
    WeekOption,
    command,
    user_errors,
    week_for,
)
from bot.cli.live import LiveSource, command_github, progress_bar
from bot.cli.platforms import CHANNEL_ID_HINTS, load_settings
from bot.clock import SYSTEM_CLOCK
from bot.errors import UserError
from bot.snapshot import snapshot_for
from bot.week import DEFAULT_TIMEZONE

if TYPE_CHECKING:
    pass

# --- live data from GitHub -------------------------------------------------------------


@command("snapshot")
@user_errors
def snapshot_command(
    repo: Annotated[str, typer.Argument(help="Repository, owner/name.", metavar="OWNER/NAME")],
    week: WeekOption,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The snapshot file to write.", dir_okay=False)
    ],
    config: ConfigOption = None,
) -> None:
    """Fetch REPO's PRs of one ISO week from GitHub into a prdigest.snapshot/1 file.

    Always asks GitHub (the cache is not used), so the file is as current as GitHub.
    """
    from bot.snapshot import write_snapshot

    settings = load_settings(config)
    week = week_for(week, settings, repo)
    update, finish = progress_bar()
    github = command_github(settings, update)
    try:
        data = github.fetch_week(repo, week)
    finally:
        finish()
        github.close()
    try:
        write_snapshot(data, output)
    except OSError as exc:
        raise UserError(f"{output}: cannot write ({exc.strerror or exc})") from None
    typer.echo(f"prdigest: wrote {len(data.pulls)} PRs of {repo} {week} to {output}", err=True)


@command()
@user_errors
def init(
    repo: Annotated[str, typer.Argument(help="Repository, owner/name.", metavar="OWNER/NAME")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", help="The config file to write.", dir_okay=False)
    ] = Path("prdigest.toml"),
    snapshot: SnapshotOption = None,
    weeks: Annotated[int, typer.Option(
        "--weeks", help="How many recent weeks of PRs to read from GitHub.", min=1, max=12)
    ] = 4,
    timezone: Annotated[str, typer.Option(
        "--timezone", help="The repository's time zone, where its weeks begin.")
    ] = DEFAULT_TIMEZONE,
    lang: LangOption = Language.zh,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")
                     ] = False,
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", dir_okay=False,
        help="A config whose [github] section to read with (GitHub Enterprise, the token "
             "variable); default github.com and $GITHUB_TOKEN.")] = None,
) -> None:
    """Write a first config for REPO from its recent PRs: its own title tags, the names
    its PRs use often and its busiest directories as topics, a sample channel (in
    Chinese unless --lang en) and a weekly schedule."""
    from bot.onboard import digest_week, next_commands, render_config
    from bot.week import current_week, shift_week, zone

    zone(timezone)  # an unknown zone is a one-line error before anything is read
    if output.exists() and not force:
        raise UserError(f"{output} exists; --force overwrites it, -o names another file")
    week = "last"
    if snapshot is not None:

        data = snapshot_for(repo, snapshot)
        pulls = list(data.pulls)
        read_from = f"the snapshot {snapshot}"
        # The week `digest --week last` picks from this file (the data's last full week),
        # or the latest it holds PRs of where that one holds none.
        week = digest_week(data, timezone) or "last"
    else:
        this = current_week(SYSTEM_CLOCK.now(), timezone)
        names = [shift_week(this, -back) for back in range(weeks)]
        source = LiveSource(load_settings(config))
        pulls = [pull for week in names for pull in source.fetch_week(repo, week).snapshot.pulls]
        read_from = f"GitHub, weeks {names[-1]} to {names[0]}"
    text = render_config(repo, pulls, timezone=timezone, lang=lang.value, read_from=read_from,
                         platforms=CHANNEL_ID_HINTS)
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{output}: cannot write ({exc.strerror or exc})") from None
    typer.echo(next_commands(repo, str(output), platform=CHANNEL_ID_HINTS[0][0], week=week,
                             snapshot=None if snapshot is None else str(snapshot)), nl=False)
