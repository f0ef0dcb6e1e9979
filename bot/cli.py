"""`prdigest` on the command line: digest, ask, snapshot, post, serve.

Every user error (bad file, bad week, bad config, unreachable data) prints one line to
stderr and exits with code 2; no traceback.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from enum import StrEnum
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from bot.config import Config, load_config
from bot.errors import UserError
from bot.models import PullRequest
from bot.render import render_digest
from bot.snapshot import check_repository, read_snapshot, snapshot_for
from bot.source import SnapshotSource, Source, WeekData
from bot.week import format_week, parse_week, past_week

if TYPE_CHECKING:
    from adapters.console import ConsoleAdapter
    from bot.chat.handler import SubscriptionStore

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Weekly GitHub pull-request digests and PR answers for team chats.",
)

F = TypeVar("F", bound=Callable[..., Any])

NoLLMOption = Annotated[
    bool, typer.Option("--no-llm", help="Leave the narrator off for this run, even when "
                       "[llm] is configured: the digest is the engine's own.")]


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
    no_llm: NoLLMOption = False,
) -> None:
    """Print the weekly digest of REPO for one ISO week."""
    import asyncio

    from bot.digests import Digests
    settings = load_config(config)
    week = past_week(week, datetime.now(UTC), settings.repo(repo).timezone)
    source: Source
    if snapshot is not None:
        source = SnapshotSource(snapshot_for(repo, snapshot))
    else:
        source = LiveSource(settings)
    focus = tuple(t.strip() for t in topics.split(",") if t.strip())

    async def build() -> Any:
        with narrator_store(settings, enabled=not no_llm) as store:
            narrator = narrator_for(settings, store, enabled=not no_llm)
            try:
                return await Digests(settings, source, narrator=narrator).build(
                    repo, week, lang.value, focus)
            finally:
                if narrator is not None:
                    await narrator.close()

    from bot.narrate import narrator_for
    result = asyncio.run(build())
    sys.stdout.write(render_digest(result, fmt.value))


@contextlib.contextmanager
def narrator_store(settings: Config, *, enabled: bool) -> Iterator[Any]:
    """Redis for the narrator's answers when `REDIS_URL` is set (a rerun then costs no
    call), else None (kept in memory for this run)."""
    if settings.llm is None or not enabled:
        yield None
        return
    from bot.store.cache import cache_from_env

    try:
        cache = cache_from_env(settings)
    except ValueError as exc:
        raise UserError(f"{settings.cache.url_env}: not a Redis URL ({exc})") from None
    try:
        yield cache
    finally:
        if cache is not None:
            cache.close()


class ReplyFormat(StrEnum):
    text = "text"
    markdown = "markdown"


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
ReplyFormatOption = Annotated[ReplyFormat, typer.Option("--format", "-f")]


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

    from adapters.console import ConsoleAdapter, console_channel, data_time
    from bot.chat.handler import CommandHandler, utc_now
    from bot.source import SnapshotSource

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
        consoles = [c.repo for c in settings.channels if c.platform == "console"]
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


@app.command()
@user_errors
def ask(
    text: Annotated[list[str], typer.Argument(help="The question, as asked in chat.")],
    repo: RepoOption = None,
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    lang: UserLanguageOption = None,
    fmt: ReplyFormatOption = ReplyFormat.text,
) -> None:
    """Answer one chat question, e.g. `prdigest ask "risks for #7035"`.

    Text outside the grammar prints the help and exits 0, as a chat reply would; an
    error reply (unknown PR, bad week) exits 1.
    """
    import asyncio

    console = console_for(repo, snapshot, config, fmt, lang)
    reply = asyncio.run(console.ask(" ".join(text)))
    if reply.kind == "error":
        raise typer.Exit(code=1)


@app.command()
@user_errors
def chat(
    repo: RepoOption = None,
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    lang: UserLanguageOption = None,
    fmt: ReplyFormatOption = ReplyFormat.text,
) -> None:
    """Chat with the bot at the terminal; `quit` or Ctrl-D ends."""
    console = console_for(repo, snapshot, config, fmt, lang)
    if sys.stdin.isatty():
        typer.echo(f"prdigest: {console.channel.repo} - type help, or quit to leave", err=True)
    console.chat(read_line=_read_line)


def _read_line(prompt: str) -> str:
    """A line from stdin; the prompt only where someone is typing."""
    if sys.stdin.isatty():
        return input(prompt)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


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


class LiveSource:
    """PRs from GitHub, through Redis when `REDIS_URL` (or the configured variable) is
    set, each read with a progress bar on stderr (a digest reads two weeks)."""

    def __init__(self, config: Config) -> None:
        self.config = config

    def fetch_week(self, repo: str, week: str) -> WeekData:
        with self._source() as source:
            return source.fetch_week(repo, week)

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        with self._source() as source:
            return source.fetch_pull(repo, number)

    @contextlib.contextmanager
    def _source(self) -> Iterator[Source]:
        from bot.github.source import GitHubSource
        from bot.store.cache import CachedSource, cache_from_env

        update, finish = progress_bar()
        github = GitHubSource(self.config, progress=update)
        cache = cache_from_env(self.config)
        try:
            yield CachedSource(github, cache, self.config)
        finally:
            finish()
            github.close()
            if cache is not None:
                cache.close()


@app.command("snapshot")
@user_errors
def snapshot_command(
    repo: Annotated[str, typer.Argument(help="Repository, owner/name.")],
    week: Annotated[str, typer.Option("--week", "-w", help="ISO week such as 2026-W29.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The snapshot file to write.", dir_okay=False)
    ],
    config: ConfigOption = None,
) -> None:
    """Fetch REPO's PRs of one ISO week from GitHub into a prdigest.snapshot/1 file.

    Always asks GitHub (the cache is not used), so the file is as current as GitHub.
    """
    from bot.github.source import GitHubSource
    from bot.snapshot import write_snapshot

    week = format_week(*parse_week(week))
    settings = load_config(config)
    update, finish = progress_bar()
    github = GitHubSource(settings, progress=update)
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


@app.command()
@user_errors
def serve(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="TOML config file.", dir_okay=False)
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", help="Port to listen on.",
                                      min=1, max=65535)] = 8080,
    snapshot: SnapshotOption = None,
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning.")
                         ] = "info",
    no_llm: NoLLMOption = False,
) -> None:
    """Run the bot: chat webhooks, GitHub webhook, report pages, /healthz and /metrics.

    Platforms whose secrets are not in the environment stay off; with --snapshot every
    week and PR is read from the file instead of GitHub (a demo that runs offline).
    """
    import logging

    import uvicorn

    from bot.config import secret
    from bot.web.app import create_app

    settings = load_config(config)
    options: dict[str, Any] = {"redis_url": secret(settings.cache.url_env), "llm": not no_llm}
    if snapshot is not None:
        from adapters.console import data_time
        from bot.source import SnapshotSource

        data = read_snapshot(snapshot)
        moment = data_time(data)
        options["source"] = SnapshotSource(data)
        if moment is not None:
            # "This week" means the snapshot's last week, as in `prdigest ask`.
            options["now"] = lambda: moment
    logging.basicConfig(level=log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        server_app = create_app(settings, freeze_heap=True, **options)
    except ValueError as exc:
        # redis-py rejects a malformed URL with ValueError; name the variable, not its value.
        raise UserError(f"{settings.cache.url_env}: not a Redis URL ({exc})") from None
    uvicorn.run(server_app, host=host, port=port, log_level=log_level.lower(), lifespan="on",
                proxy_headers=True)


@app.command()
@user_errors
def post(
    repo: Annotated[str, typer.Argument(help="Repository, owner/name.")],
    week: Annotated[str, typer.Option("--week", "-w", help="ISO week such as 2026-W29.")],
    channel: Annotated[str, typer.Option(
        "--channel", help="The configured channel, platform:id (slack:C0123456).")],
    force: Annotated[bool, typer.Option(
        "--force", help="Send again even if the ledger says it was posted.")] = False,
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    no_llm: NoLLMOption = False,
) -> None:
    """Post REPO's digest of one week to one channel now, through the schedule's ledger."""
    import asyncio
    import logging

    from bot.delivery.post import describe, post_now
    from bot.store.client import REDIS_ERRORS

    # The outcome is the one line below; library chatter would only bury it.
    logging.basicConfig(level=logging.ERROR, format="prdigest: %(name)s: %(message)s")

    settings = load_config(config)
    try:
        result = asyncio.run(post_now(settings, repo, week, channel, force=force,
                                      snapshot=snapshot, llm=not no_llm))
    except REDIS_ERRORS as exc:
        fail(f"Redis ({settings.cache.url_env}) failed: {type(exc).__name__}: {exc}; run it "
             "again once Redis answers (the ledger keeps a post from going out twice)")
    line = describe(result)
    if result.status == "failed":
        fail(line)
    if result.status in ("held", "busy"):
        typer.echo(f"prdigest: {line}", err=True)
        raise typer.Exit(code=1)
    typer.echo(line)


def main() -> None:
    """Console entry point."""
    app(prog_name="prdigest")


if __name__ == "__main__":
    main()
