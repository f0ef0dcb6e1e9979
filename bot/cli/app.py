"""The `prdigest` command: its Typer app, shared options and the one-line error rule.

Every user error (bad file, bad week, bad config, unreachable data) prints one line to
stderr and exits with code 2; no traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer._click.core import Context, Parameter  # Typer runs on a click of its own
from typer.core import TyperCommand, TyperGroup, TyperOption

from bot.clock import SYSTEM_CLOCK
from bot.config import Config
from bot.errors import UserError
from bot.week import past_week, resolve_week


def _untyped_flags(params: list[Parameter]) -> list[Parameter]:
    """Flags (`--force`, `--help`) shown without a `<bool>` type in help."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class HelpCommand(TyperCommand):
    """A command whose help shows flags without a type."""

    def get_params(self, ctx: Context) -> list[Parameter]:
        return _untyped_flags(super().get_params(ctx))


class HelpGroup(TyperGroup):
    """The command group, with the same help."""

    def get_params(self, ctx: Context) -> list[Parameter]:
        return _untyped_flags(super().get_params(ctx))


# Markdown help: a docstring's paragraphs are reflowed to the terminal, not shown with
# the line breaks of the source.
app = typer.Typer(
    cls=HelpGroup,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    help="Weekly GitHub pull-request digests and PR answers for team chats.",
)
command = functools.partial(app.command, cls=HelpCommand)

F = TypeVar("F", bound=Callable[..., Any])

NoLLMOption = Annotated[
    bool, typer.Option("--no-llm", help="Leave the narrator off for this run, even when "
                       "[llm] is configured: the digest is the engine's own.")]


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"prdigest {version('prdigest')}")
        raise typer.Exit()


@app.callback()
def cli(
    version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version,
        help="Print the version and exit.")] = False,
) -> None:
    """Weekly GitHub pull-request digests and PR answers for team chats."""


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
SnapshotsOption = Annotated[
    list[Path] | None,
    typer.Option("--snapshot", "-s", dir_okay=False, metavar="<file>",
                 help="Read PRs from this snapshot file instead of GitHub; with several "
                      "repositories, one file each (each holds its repository's name)."),
]


WeekOption = Annotated[str, typer.Option(
    "--week", "-w", metavar="WEEK",
    help="ISO week such as 2026-W29, or `last` or `this` (in the repository's time zone).")]
LangOption = Annotated[Language, typer.Option(
    "--lang", "-l", help="Language of the digest: zh (Chinese) or en (English).")]


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


def week_for(text: str, settings: Config, repo: str, now: datetime | None = None) -> str:
    """`--week` in canonical form: `last` and `this` in the repository's time zone (as
    of `now`: a snapshot's last moment, or today). A week still to come is refused as
    of today; one a snapshot does not reach is the snapshot's to say."""
    today = SYSTEM_CLOCK.now()  # a command runs on the process's clock
    tz = settings.repo(repo).timezone
    return past_week(resolve_week(text, now or today, tz), today, tz)



def main() -> None:
    """Console entry point."""
    app(prog_name="prdigest")


if __name__ == "__main__":
    main()
