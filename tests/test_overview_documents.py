"""The chats a reader is in, laid out in the core (`bot.render.overviews`): the opening
says why nothing is listed, a chat is named by a span every platform encodes - Slack as
a link to the channel, the others as its id - and the line for chats left out counts
them, in English and Chinese."""

from __future__ import annotations

import json

import pytest

from adapters.feishu.render import card_content
from adapters.feishu.render import encode as feishu_encode
from adapters.slack.render import encode as slack_encode
from adapters.telegram.render import encode as telegram_encode
from bot.models import Lang
from bot.render.document import ChatRef, Code, Context, Heading, Paragraph, Text, plain
from bot.render.overviews import chat_heading, more_chats, overview_opening


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_opening_says_why_nothing_is_listed(lang: Lang) -> None:
    listed = overview_opening(lang, readable=True, chats=2)
    assert [type(b) for b in listed.blocks] == [Context] and listed.headline
    none_yet = overview_opening(lang, readable=True, chats=0)
    [_, paragraph] = none_yet.blocks
    assert isinstance(paragraph, Paragraph)
    assert any(isinstance(span, Code) and "owner/repo" in span.text
               for span in paragraph.lines[0])
    unreadable = overview_opening(lang, readable=False, chats=0)
    [_, why] = unreadable.blocks
    assert isinstance(why, Paragraph) and plain(why.lines[0]) != plain(paragraph.lines[0])
    assert listed.title == none_yet.title == unreadable.title != ""


def test_a_chat_is_named_as_each_platform_names_it() -> None:
    heading = chat_heading("C0123ABC", "en", direct=False)
    assert heading.blocks == (Heading((ChatRef("C0123ABC"),)),)
    [slack] = slack_encode(heading)
    assert slack.blocks[0]["text"]["text"] == "*<#C0123ABC>*"
    # Not a Slack channel id: escaped, never a link or a mention.
    [odd] = slack_encode(chat_heading("<!channel>", "en", direct=False))
    assert odd.blocks[0]["text"]["text"] == "*&lt;!channel&gt;*"
    [telegram] = telegram_encode(heading)
    assert "C0123ABC" in telegram.text and "<#" not in telegram.text
    [card] = feishu_encode(heading)
    assert "C0123ABC" in card_content(card) and "<#" not in card_content(card)


def test_the_readers_direct_messages_are_said_so() -> None:
    assert chat_heading("D0123ABC", "en", direct=True).blocks == (
        Heading((Text("Our direct messages"),)),)
    [zh] = chat_heading("D0123ABC", "zh", direct=True).blocks
    assert isinstance(zh, Heading) and plain(zh.line) == "我们的私信"


@pytest.mark.parametrize(("lang", "left", "words"), [
    ("en", 1, "1 more channel is not shown."), ("en", 3, "3 more channels are not shown."),
    ("zh", 3, "还有 3 个频道未显示。")])
def test_the_chats_left_out_are_counted(lang: Lang, left: int, words: str) -> None:
    [block] = more_chats(left, lang).blocks
    assert isinstance(block, Context) and plain(block.lines[0]) == words
    assert words in json.dumps(slack_encode(more_chats(left, lang))[0].blocks,
                               ensure_ascii=False)
