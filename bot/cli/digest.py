"""`prdigest digest`: one week's digest, or a preview of what a channel would get."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated, Any

import msgspec
import typer

from bot.cli.app import (
    ConfigOption,
    LangOption,
    Language,
    NoLLMOption,
    SnapshotsOption,
    WeekOption,
    command,
    user_errors,
    week_for,
)
from bot.cli.live import LiveSource
from bot.cli.platforms import (
    MARKDOWN,
    PLATFORM_FORMATS,
    DigestFormatOption,
    load_settings,
    print_preview,
)
from bot.config import secret
from bot.errors import UserError
from bot.models import ChatForm
from bot.render import render_digest
from bot.snapshot import data_time, snapshots_for
from bot.source import SnapshotSource, Source


class Style(StrEnum):
    full = "full"
    compact = "compact"


# The chat forms a style applies to; Markdown is always the full report.
STYLED_FORMATS = frozenset({"text", "json", *PLATFORM_FORMATS})

StyleOption = Annotated[Style, typer.Option(
    "--style", help="The chat form: full, or compact (a few lines per section, at most "
                    "about 800 characters, the report link first), as a channel's `style`.")]
PeopleOption = Annotated[bool, typer.Option(
    "--people", help="Add the People line to the chat form, as a channel's `people`.")]


@command()
@user_errors
def digest(
    repos: Annotated[list[str], typer.Argument(
        help="Repository, owner/name; several make one digest of them all.",
        metavar="OWNER/NAME...")],
    week: WeekOption,
    snapshot: SnapshotsOption = None,
    config: ConfigOption = None,
    fmt: DigestFormatOption = MARKDOWN,
    lang: LangOption = Language.zh,
    topics: Annotated[
        str, typer.Option("--topics", help="Comma-separated topics to put first.")
    ] = "",
    no_llm: NoLLMOption = False,
    style: StyleOption = Style.full,
    people: PeopleOption = False,
) -> None:
    """Print the weekly digest of REPO (or of several repositories in one) for one ISO
    week, or preview what a Slack, Telegram or Feishu channel would receive
    (`--format slack`)."""
    import asyncio

    if style is Style.compact and fmt.value not in STYLED_FORMATS:
        raise UserError("--style compact is a chat form: use it with --format text or "
                        f"{' or '.join(PLATFORM_FORMATS)} (markdown is the full report)")

    from bot.compose import compose
    settings = load_settings(config)
    source: Source
    now = None
    if snapshot:
        held = snapshots_for(repos, snapshot)
        source = SnapshotSource(*held)
        now = max((t for t in map(data_time, held) if t is not None), default=None)
    else:
        source = LiveSource(settings)
    week = week_for(week, settings, repos[0], now)
    focus = tuple(t.strip() for t in topics.split(",") if t.strip())
    preview = fmt.value in PLATFORM_FORMATS

    async def build() -> Any:
        # The narrator's answers go to Redis when `REDIS_URL` is set (a rerun then costs
        # no call), else they are kept in memory for this run.
        url = secret(settings.cache.url_env) if settings.llm is not None and not no_llm \
            else None
        async with compose(settings, "digest", source=source, redis_url=url,
                           llm=not no_llm) as process:
            # A channel's digest links to its report page; the preview shows it too.
            return await process.digests.build_many(repos, week, lang.value, focus,
                                                    link=preview)

    result = msgspec.structs.replace(asyncio.run(build()),
                                     chat_form=ChatForm(style=style.value, people=people))
    if preview:
        print_preview(fmt.value, settings, repos, result)
        return
    sys.stdout.write(render_digest(result, fmt.value))  # type: ignore[arg-type]
