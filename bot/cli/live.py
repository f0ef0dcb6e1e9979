"""Live data from GitHub as a command reads it: a progress bar on stderr, one line when it
starts retrying, no retry for a host name that does not resolve."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import typer

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config
from bot.models import PullRequest
from bot.source import WeekData

if TYPE_CHECKING:
    from bot.github.source import GitHubSource
    from bot.store.cache import CachedSource


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
                   notice: RetryNotice | None = None, *,
                   clock: Clock = SYSTEM_CLOCK) -> GitHubSource:
    """GitHub as a command line reads it: one line when it starts retrying, and no retry
    at all when the host name does not resolve (offline, or a mistyped api_url)."""
    from bot.github.policy import RetrySettings
    from bot.github.source import GitHubSource

    return GitHubSource(config, progress=progress, retry=RetrySettings(retry_unresolved=False),
                        on_retry=notice or RetryNotice(config.github.api_url), clock=clock)


class LiveSource:
    """PRs from GitHub, through Redis when `REDIS_URL` (or the configured variable) is
    set, each read with a progress bar on stderr (a digest reads two weeks), on the
    process's `clock`."""

    def __init__(self, config: Config, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.config = config
        self.clock = clock
        self.notice = RetryNotice(config.github.api_url)

    def fetch_week(self, repo: str, week: str) -> WeekData:
        with self._source() as source:
            return source.fetch_week(repo, week)

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        with self._source() as source:
            return source.fetch_pull(repo, number)

    def fetch_trend_week(self, repo: str, week: str) -> WeekData:
        """The week before a digest's, read for its counts only (its trends)."""
        with self._source() as source:
            return source.fetch_trend_week(repo, week)

    def holds_trends_fresh(self, repo: str, week: str) -> bool | None:
        with self._source() as source:
            return source.holds_trends_fresh(repo, week)

    @contextlib.contextmanager
    def _source(self) -> Iterator[CachedSource]:
        from bot.store.cache import CachedSource
        from bot.store.redis.cache import cache_from_env

        update, finish = progress_bar()
        github = command_github(self.config, update, self.notice, clock=self.clock)
        cache = cache_from_env(self.config, self.clock)
        try:
            yield CachedSource(github, cache, self.config, clock=self.clock)
        finally:
            finish()
            github.close()
            if cache is not None:
                cache.close()
