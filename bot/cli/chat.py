"""`prdigest ask` and `prdigest chat`: the chat grammar at the terminal."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from bot.cli.app import (
    ConfigOption,
    Language,
    SnapshotOption,
    command,
    user_errors,
)
from bot.cli.platforms import (
    PLATFORM_FORMATS,
    TEXT,
    AskFormatOption,
    ReplyFormat,
    console_session,
    print_preview,
)

RepoOption = Annotated[
    str | None,
    typer.Option("--repo", "-r", help="Repository, owner/name (default: the snapshot's, or "
                 "the only one in the config)."),
]
UserLanguageOption = Annotated[
    Language | None,
    typer.Option("--lang", "-l", help="Answer in this language (default: the language of "
                 "the question)."),
]
ReplyFormatOption = Annotated[ReplyFormat, typer.Option(
    "--format", "-f", help="text: as chat shows it; markdown: the same in Markdown.")]



@command()
@user_errors
def ask(
    text: Annotated[list[str], typer.Argument(help="The question, as asked in chat.",
                                              metavar="QUESTION...")],
    repo: RepoOption = None,
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    lang: UserLanguageOption = None,
    fmt: AskFormatOption = TEXT,
) -> None:
    """Answer one chat question, e.g. `prdigest ask "risks for #7035"`.

    Text outside the grammar prints the help and exits 0, as a chat reply would; an
    error reply (unknown PR, bad week) exits 1.
    """
    import asyncio

    preview = fmt.value in PLATFORM_FORMATS
    with console_session(repo, snapshot, config,
                         ReplyFormat.text if preview else ReplyFormat(fmt.value),
                         lang) as console:
        if preview:
            reply = asyncio.run(console.answer(" ".join(text)))
            print_preview(fmt.value, console.handler.config, (console.channel.repo,),
                          reply)
        else:
            reply = asyncio.run(console.ask(" ".join(text)))
    if reply.kind == "error":
        raise typer.Exit(code=1)


@command()
@user_errors
def chat(
    repo: RepoOption = None,
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    lang: UserLanguageOption = None,
    fmt: ReplyFormatOption = ReplyFormat.text,
) -> None:
    """Chat with the bot at the terminal; `quit` or Ctrl-D ends.

    Lines can be edited, and earlier questions come back with the arrow keys (kept
    between sessions in ~/.prdigest_history, or the file $PRDIGEST_HISTORY names).
    """
    with console_session(repo, snapshot, config, fmt, lang) as console:
        if not sys.stdin.isatty():
            console.chat(read_line=_read_piped_line)
            return
        typer.echo(f"prdigest: {console.channel.repo} - type help, or quit to leave",
                   err=True)
        with line_history():
            console.chat(read_line=input)


def _read_piped_line(prompt: str) -> str:
    """A line of piped stdin, without a prompt: nobody is typing."""
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


HISTORY_LINES = 1000


@contextlib.contextmanager
def line_history() -> Iterator[None]:
    """Line editing and history for `input()` (GNU readline, where Python has it);
    the history file is read at the start and written at the end."""
    try:
        import readline
    except ImportError:  # a Python built without readline: plain input still works
        yield
        return
    path = Path(os.environ.get("PRDIGEST_HISTORY") or Path.home() / ".prdigest_history")
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(HISTORY_LINES)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            readline.write_history_file(path)
