"""`prdigest` on the command line: digest, ask, snapshot, post, serve.

Every user error (bad file, bad week, bad config, unreachable data) prints one line to
stderr and exits with code 2; no traceback.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from enum import StrEnum
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from typer._click.core import Context, Parameter  # Typer runs on a click of its own
from typer.core import TyperCommand, TyperGroup, TyperOption

from bot.config import Config, load_config
from bot.errors import UserError
from bot.models import PullRequest
from bot.render import render_digest
from bot.snapshot import check_repository, read_snapshot, snapshot_for
from bot.source import SnapshotSource, Source, WeekData
from bot.week import DEFAULT_TIMEZONE, past_week, resolve_week

if TYPE_CHECKING:
    from adapters.console import ConsoleAdapter
    from bot.chat.handler import SubscriptionStore

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


class OutputFormat(StrEnum):
    markdown = "markdown"
    text = "text"
    json = "json"
    slack = "slack"
    telegram = "telegram"
    feishu = "feishu"


# Formats that print the requests a chat platform would receive (`adapters.preview`).
PLATFORM_FORMATS = frozenset({"slack", "telegram", "feishu"})


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
WeekOption = Annotated[str, typer.Option(
    "--week", "-w", metavar="WEEK",
    help="ISO week such as 2026-W29, or `last` or `this` (in the repository's time zone).")]
LangOption = Annotated[Language, typer.Option(
    "--lang", "-l", help="Language of the digest: zh (Chinese) or en (English).")]
DigestFormatOption = Annotated[OutputFormat, typer.Option(
    "--format", "-f",
    help="markdown: the full report; text: the plain chat text; json: the Digest JSON; "
         "slack, telegram, feishu: the requests that platform receives, as JSON.")]


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
    of `now`: a snapshot's last moment, or today)."""
    moment = now or datetime.now(UTC)
    tz = settings.repo(repo).timezone
    return past_week(resolve_week(text, moment, tz), moment, tz)


def preview_channel(settings: Config, repo: str, platform: str) -> str:
    """The id a preview addresses: the first configured channel of that platform that
    follows `repo`, or a placeholder."""
    from adapters.preview import PLACEHOLDER_CHANNEL

    return next((c.id for c in settings.channels
                 if c.platform == platform and c.repo.lower() == repo.lower()),
                PLACEHOLDER_CHANNEL)


@command()
@user_errors
def digest(
    repo: Annotated[str, typer.Argument(help="Repository, owner/name.", metavar="OWNER/NAME")],
    week: WeekOption,
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    fmt: DigestFormatOption = OutputFormat.markdown,
    lang: LangOption = Language.zh,
    topics: Annotated[
        str, typer.Option("--topics", help="Comma-separated topics to put first.")
    ] = "",
    no_llm: NoLLMOption = False,
) -> None:
    """Print the weekly digest of REPO for one ISO week, or preview what a Slack,
    Telegram or Feishu channel would receive (`--format slack`)."""
    import asyncio

    from bot.digests import Digests
    settings = load_config(config)
    source: Source
    now = None
    if snapshot is not None:
        from adapters.console import data_time

        data = snapshot_for(repo, snapshot)
        source, now = SnapshotSource(data), data_time(data)
    else:
        source = LiveSource(settings)
    week = week_for(week, settings, repo, now)
    focus = tuple(t.strip() for t in topics.split(",") if t.strip())
    preview = fmt.value in PLATFORM_FORMATS

    async def build() -> Any:
        with narrator_store(settings, enabled=not no_llm) as store:
            narrator = narrator_for(settings, store, enabled=not no_llm)
            try:
                # A channel's digest links to its report page; the preview shows it too.
                return await Digests(settings, source, narrator=narrator).build(
                    repo, week, lang.value, focus, link=preview)
            finally:
                if narrator is not None:
                    await narrator.close()

    from bot.narrate import narrator_for
    result = asyncio.run(build())
    if preview:
        from adapters.preview import preview_json

        sys.stdout.write(preview_json(fmt.value, preview_channel(settings, repo, fmt.value),
                                      result))
        return
    sys.stdout.write(render_digest(result, fmt.value))  # type: ignore[arg-type]


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


class AskFormat(StrEnum):
    text = "text"
    markdown = "markdown"
    slack = "slack"
    telegram = "telegram"
    feishu = "feishu"


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
AskFormatOption = Annotated[AskFormat, typer.Option(
    "--format", "-f", help="text: as chat shows it; markdown: the same in Markdown; slack, "
    "telegram, feishu: the requests that platform receives, as JSON.")]


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


@command()
@user_errors
def ask(
    text: Annotated[list[str], typer.Argument(help="The question, as asked in chat.",
                                              metavar="QUESTION...")],
    repo: RepoOption = None,
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    lang: UserLanguageOption = None,
    fmt: AskFormatOption = AskFormat.text,
) -> None:
    """Answer one chat question, e.g. `prdigest ask "risks for #7035"`.

    Text outside the grammar prints the help and exits 0, as a chat reply would; an
    error reply (unknown PR, bad week) exits 1.
    """
    import asyncio

    preview = fmt.value in PLATFORM_FORMATS
    console = console_for(repo, snapshot, config,
                          ReplyFormat.text if preview else ReplyFormat(fmt.value), lang)
    if preview:
        from adapters.preview import preview_json

        reply = asyncio.run(console.answer(" ".join(text)))
        sys.stdout.write(preview_json(fmt.value, preview_channel(
            console.handler.config, console.channel.repo, fmt.value), reply))
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
    console = console_for(repo, snapshot, config, fmt, lang)
    if not sys.stdin.isatty():
        console.chat(read_line=_read_piped_line)
        return
    typer.echo(f"prdigest: {console.channel.repo} - type help, or quit to leave", err=True)
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
    from bot.github.source import GitHubSource
    from bot.snapshot import write_snapshot

    settings = load_config(config)
    week = week_for(week, settings, repo)
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
        from adapters.console import data_time

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


@command()
@user_errors
def serve(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="TOML config file.", dir_okay=False)
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", help="Port to listen on.",
                                      min=1, max=65535)] = 8080,
    snapshot: Annotated[Path | None, typer.Option(
        "--snapshot", "-s", envvar="PRDIGEST_SNAPSHOT", dir_okay=False,
        help="Read PRs from this snapshot file instead of GitHub (an offline demo).")] = None,
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


@command()
@user_errors
def post(
    repo: Annotated[str, typer.Argument(help="Repository, owner/name.", metavar="OWNER/NAME")],
    week: WeekOption,
    channel: Annotated[str, typer.Option(
        "--channel", metavar="PLATFORM:ID",
        help="The configured channel, platform:id (slack:C0123456).")],
    force: Annotated[bool, typer.Option(
        "--force", help="Send again even if the ledger says it was posted.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the requests the platform would receive and send nothing; "
        "needs no Redis and no secrets.")] = False,
    snapshot: SnapshotOption = None,
    config: ConfigOption = None,
    no_llm: NoLLMOption = False,
) -> None:
    """Post REPO's digest of one week to one channel now, through the schedule's ledger
    (`--dry-run`: print what would be sent instead)."""
    import asyncio
    import logging

    from bot.delivery.post import describe, dry_run_post, post_now
    from bot.store.client import REDIS_ERRORS

    if dry_run:
        target, shown, parts = asyncio.run(dry_run_post(load_config(config), repo, week,
                                                        channel, snapshot=snapshot))
        sys.stdout.write(parts)
        typer.echo(f"prdigest: dry run: {shown} of {target.repo} to {target.key}; "
                   "nothing was sent", err=True)
        return

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
