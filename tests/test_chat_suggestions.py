"""In the chat form a suggestion too long for its line loses its quotation, then its
reason, never the action it asks for."""

from __future__ import annotations

import pytest

from bot.clock import HeldClock
from bot.digests import Digests
from bot.i18n import translator
from bot.render import render_digest
from bot.render.sections import DIGEST_SECTIONS
from bot.source import SnapshotSource
from testkit.server_support import NOW, REPO, example_config, example_snapshot


def suggestion_lines(text: str, lang: str) -> list[str]:
    heading = translator(lang)(next(s for s in DIGEST_SECTIONS if s.id == "suggestions")
                                .heading or "")
    tail = text.split(heading, 1)[1]
    return [line for line in tail.splitlines() if line[:2].rstrip(".").isdigit()]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_chat_suggestions_are_whole_sentences_naming_their_pr(lang: str) -> None:
    digests = Digests(example_config(), SnapshotSource(example_snapshot()), clock=HeldClock(NOW))
    digest = await digests.build(REPO, "2026-W29", lang)  # type: ignore[arg-type]
    lines = suggestion_lines(render_digest(digest, "text"), lang)
    assert lines, "the example week has suggestions"
    for line in lines:
        assert not line.endswith("…"), line
        assert line.endswith(("。", ".")), line
    full = " ".join(digest.suggestions)
    for line in lines:
        for number in [w for w in line.replace("：", " ").split() if w.startswith("#")]:
            assert number.rstrip(":,") in full
