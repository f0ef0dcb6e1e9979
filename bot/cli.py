"""`prdigest` on the command line: digest, ask, snapshot, post, serve.

Every user error (bad file, bad week, bad config, unreachable data) prints one line to
stderr and exits with code 2; no traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from bot.config import Config, load_config
from bot.engine import build_digest
from bot.errors import SnapshotError, UserError
from bot.models import Snapshot
from bot.render import render_digest
from bot.snapshot import read_snapshot
from bot.week import format_week, parse_week

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Weekly GitHub pull-request digests and PR answers for team chats.",
)

F = TypeVar("F", bound=Callable[..., Any])


@app.callback()
def cli() -> None:
    """Weekly GitHub pull-request digests and PR answers for team chats."""


class OutputFormat(StrEnum):
    markdown = "markdown"
    text = "text"
    json = "json"


class Language(StrEnum):
    zh = "zh"
    en = "en"


ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="TOML config file.", dir_okay=False)
]
SnapshotOption = Annotated[
    Path | None,
    typer.Option("--snapshot", "-s", help="Read PRs from this snapshot file instead of GitHub.",
                 dir_okay=False),
]


def fail(message: str) -> None:
    typer.echo(f"prdigest: error: {message}", err=True)
    raise typer.Exit(code=2)


def user_errors(func: F) -> F:
    """Turn `UserError` into a one-line message and exit code 2."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            fail(str(exc))

    return wrapper  # type: ignore[return-value]


def snapshot_for(repo: str, path: Path) -> Snapshot:
    """The snapshot at `path`, which must hold `repo`."""
    snapshot = read_snapshot(path)
    if snapshot.repository.lower() != repo.lower():
        raise SnapshotError(
            f"{path}: holds {snapshot.repository}, not {repo} (repository: unknown in this "
            "snapshot)"
        )
    return snapshot


def load_week(repo: str, week: str, config: Config, snapshot_path: Path | None) -> Snapshot:
    """A week's PRs from the snapshot file, or live from GitHub through the cache."""
    if snapshot_path is not None:
        return snapshot_for(repo, snapshot_path)
    from bot.cache import CachedSource, cache_from_env
    from bot.github import GitHubSource

    source = CachedSource(GitHubSource(config), cache_from_env(config), config)
    return source.fetch_week(repo, week).snapshot


@app.command()
@user_errors
def digest(
    repo: Annotated[str, typer.Argument(help="Repository, owner/name.")],
    week: Annotated[str, typer.Option("--week", "-w", help="ISO week such as 2026-W29.")],
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.markdown,
    lang: Annotated[Language, typer.Option("--lang", "-l")] = Language.zh,
    topics: Annotated[
        str, typer.Option("--topics", help="Comma-separated topics to put first.")
    ] = "",
) -> None:
    """Print the weekly digest of REPO for one ISO week."""
    week = format_week(*parse_week(week))
    settings = load_config(config)
    data = load_week(repo, week, settings, snapshot)
    result = build_digest(
        data,
        week,
        repo_config=settings.repo(data.repository),
        lang=lang.value,
        focus_topics=tuple(t.strip() for t in topics.split(",") if t.strip()),
        previous=data,
    )
    sys.stdout.write(render_digest(result, fmt.value))


def main() -> None:
    """Console entry point."""
    app(prog_name="prdigest")


if __name__ == "__main__":
    main()
