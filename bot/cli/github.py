"""`prdigest snapshot` and `prdigest init`, and live data from GitHub with a progress
bar."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
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
from bot.config import Config, load_config
from bot.errors import UserError
from bot.models import PullRequest
from bot.snapshot import data_time, snapshot_for
from bot.source import Source, WeekData
from bot.week import DEFAULT_TIMEZONE

if TYPE_CHECKING:
    from bot.github.source import GitHubSource

# --- live data from GitHub -------------------------------------------------------------


def progress_bar() -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """A progress bar on stderr (PRs fetched of PRs found) and the function ending it.

    Only at a terminal: it appears with the first figures and leaves nothing behind;
    logs and pipes get no bar at all.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    bar = Progress(TextColumn("fetching PRs"), BarColumn(), MofNCompleteColumn(),
                   console=console, transient=True)
    task = bar.add_task("fetch", total=None)

    def update(done: int, total: int) -> None:
        if not console.is_terminal:
            return
        if not bar.live.is_started:
            bar.start()
        bar.update(task, completed=done, total=total)

    def finish() -> None:
        if bar.live.is_started:
            bar.stop()

    return update, finish


class RetryNotice:
    """The one line a command prints when GitHub does not answer and it starts retrying
    (later retries of the same run say nothing more)."""

    def __init__(self, api_url: str) -> None:
        self.api_url = api_url
        self.told = False

    def __call__(self, reason: str, delay: float) -> None:
        if self.told:
            return
        self.told = True
        typer.echo(f"prdigest: GitHub at {self.api_url} did not answer ({reason}); retrying "
                   f"in {delay:.0f} s", err=True)


def command_github(config: Config, progress: Callable[[int, int], None] | None = None,
                   notice: RetryNotice | None = None) -> GitHubSource:
    """GitHub as a command line reads it: one line when it starts retrying, and no retry
    at all when the host name does not resolve (offline, or a mistyped api_url)."""
    from bot.github.source import GitHubSource

    return GitHubSource(config, progress=progress, retry_unresolved=False,
                        on_retry=notice or RetryNotice(config.github.api_url))


class LiveSource:
    """PRs from GitHub, through Redis when `REDIS_URL` (or the configured variable) is
    set, each read with a progress bar on stderr (a digest reads two weeks)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.notice = RetryNotice(config.github.api_url)

    def fetch_week(self, repo: str, week: str) -> WeekData:
        with self._source() as source:
            return source.fetch_week(repo, week)

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        with self._source() as source:
            return source.fetch_pull(repo, number)

    @contextlib.contextmanager
    def _source(self) -> Iterator[Source]:
        from bot.store.cache import CachedSource, cache_from_env

        update, finish = progress_bar()
        github = command_github(self.config, update, self.notice)
        cache = cache_from_env(self.config)
        try:
            yield CachedSource(github, cache, self.config)
        finally:
            finish()
            github.close()
            if cache is not None:
                cache.close()



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

    settings = load_config(config)
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
    lang: LangOption = Language.en,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")
                     ] = False,
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", dir_okay=False,
        help="A config whose [github] section to read with (GitHub Enterprise, the token "
             "variable); default github.com and $GITHUB_TOKEN.")] = None,
) -> None:
    """Write a first config for REPO from its recent PRs: its own title tags and busiest
    directories as topics, a sample channel and a weekly schedule."""
    from bot.onboard import next_commands, render_config
    from bot.week import current_week, shift_week, week_of, zone

    zone(timezone)  # an unknown zone is a one-line error before anything is read
    if output.exists() and not force:
        raise UserError(f"{output} exists; --force overwrites it, -o names another file")
    week = "last"
    if snapshot is not None:

        data = snapshot_for(repo, snapshot)
        pulls = list(data.pulls)
        read_from = f"the snapshot {snapshot}"
        moment = data_time(data)
        week = "last" if moment is None else week_of(moment, timezone)
    else:
        this = current_week(datetime.now(UTC), timezone)
        names = [shift_week(this, -back) for back in range(weeks)]
        source = LiveSource(load_config(config))
        pulls = [pull for week in names for pull in source.fetch_week(repo, week).snapshot.pulls]
        read_from = f"GitHub, weeks {names[-1]} to {names[0]}"
    text = render_config(repo, pulls, timezone=timezone, lang=lang.value, read_from=read_from)
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{output}: cannot write ({exc.strerror or exc})") from None
    typer.echo(next_commands(repo, str(output), week=week,
                             snapshot=None if snapshot is None else str(snapshot)), nl=False)
