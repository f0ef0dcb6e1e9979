"""A PR's title in a chat answer shows its code as code, as the digest does: a team that
writes RST (``concatenate``) or Markdown (`np.unique`) code in titles reads it so, never
as doubled or escaped backticks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import Config, parse_config
from bot.digests import Digests
from bot.models import PullRequest, Snapshot
from bot.render import render_reply
from bot.source import SnapshotSource
from testkit.pulls import merged_pull

REPO = "numpy/numpy"
MERGED = datetime(2026, 8, 12, 3, tzinfo=UTC)
NOW = datetime(2026, 8, 15, 12, tzinfo=UTC)
CONFIG: Config = parse_config({
    "repos": {REPO: {"timezone": "UTC"}},
    "channels": [{"platform": "slack", "id": "C1", "repo": REPO, "lang": "en"}],
})


def _pull(number: int, title: str) -> PullRequest:
    return merged_pull(number, title, ("numpy/_core/multiarray.pyi",), lines=30, when=MERGED,
                       repo=REPO)


SNAPSHOT = Snapshot(repository=REPO, fetched_at=NOW, pulls=(
    _pull(32207, "TYP: ``concatenate`` shape-typing"),
    _pull(32215, "TYP: `np.unique` shape-typing"),
))


@pytest.mark.parametrize("text", ["what changed in typing this week", "本周 typing 有什么变化"])
async def test_a_topic_answer_shows_title_code_as_code(text: str) -> None:
    handler = CommandHandler(Digests(CONFIG, SnapshotSource(SNAPSHOT), clock=HeldClock(NOW)))
    reply = await handler.handle(parse_command(text), channel=CONFIG.channels[0])
    said = render_reply(reply, "markdown")
    assert "#32207" in said and "#32215" in said, said
    assert "`concatenate`" in said and "``" not in said and "\\`" not in said, said
    assert "`np.unique`" in said, said
