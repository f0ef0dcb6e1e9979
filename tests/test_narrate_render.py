"""Narrated sentences in each format: code spans as code (not escaped backticks), PR
references as the engine writes them, everything else escaped like GitHub text."""

from __future__ import annotations

import msgspec
import pytest

from adapters.telegram.render import render_digest_html
from bot.models import Digest, NarratedProse, Narration
from bot.render import render_digest
from bot.render.html import PageLinks, render_report_page
from testkit.narration.week import REPO, WEEK, example_digests, plain_config

SENTENCE = "本周 #{n} 修复了 `<|image_pad|>` 与 `__init__.py` 的问题，<b>x</b> 不是标签。"


async def _narrated() -> tuple[Digest, int]:
    engine = await example_digests(plain_config()).build(REPO, WEEK, "zh")
    number = engine.key_pulls[0].number
    key = msgspec.structs.replace(engine.key_pulls[0], summary=SENTENCE.format(n=number))
    narration = Narration(model="m", sections_narrated=("summary", "key_prs"),
                          prose=(NarratedProse(section="summary",
                                               sentences=(SENTENCE.format(n=number),)),))
    return msgspec.structs.replace(engine, narration=narration,
                                   key_pulls=(key, *engine.key_pulls[1:])), number


async def test_markdown_shows_code_spans_as_code() -> None:
    digest, number = await _narrated()
    text = render_digest(digest, "markdown")
    assert "`<|image_pad|>`" in text and "`__init__.py`" in text
    assert "\\`" not in text.split("## ", 2)[1]  # the summary: no escaped backticks
    assert "\\<b\\>" in text or "\\<b>" in text  # markup outside code spans stays inert
    assert f"#{number}" in text


async def test_html_and_telegram_show_code_spans_as_code_and_link_references() -> None:
    digest, number = await _narrated()
    page = render_report_page(digest, PageLinks())
    assert "<code>&lt;|image_pad|&gt;</code>" in page and "<code>__init__.py</code>" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert f'/pull/{number}">#{number}</a>' in page
    chat = render_digest_html(msgspec.structs.replace(digest, report_url=None))
    assert "<code>&lt;|image_pad|&gt;</code>" in chat
    assert f'/pull/{number}">#{number}</a>' in chat


@pytest.mark.parametrize("fmt", ["markdown", "text"])
async def test_an_engine_section_keeps_its_escaping(fmt: str) -> None:
    engine = await example_digests(plain_config()).build(REPO, WEEK, "zh")
    assert render_digest(engine, fmt) == render_digest(  # type: ignore[arg-type]
        msgspec.structs.replace(engine, narration=Narration(model="m")), fmt)  # type: ignore[arg-type]
