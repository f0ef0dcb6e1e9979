"""Telegram rendering without the network: counting as Telegram counts, splitting that
never cuts a tag or an entity, escaping, and reading updates into commands."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telegram import Bot, Update

from adapters.telegram.flood import retry_after_seconds
from adapters.telegram.inbound import question_from_update
from adapters.telegram.markup import TelegramMarkup
from adapters.telegram.render import split_html, visible_length
from bot.chat.grammar import DEFAULT_BOT_NAMES
from bot.chat.inbound import read_command
from testkit.fakes.telegram import (
    TOKEN,
    group_chat,
    message_update,
    parse_html,
    private_chat,
    user,
    utf16_length,
)

m = TelegramMarkup()


@pytest.mark.parametrize(
    ("html_text", "length"),
    [
        ("<b>bold</b>", 4),
        ("a &lt; b &amp;&amp; c", 10),
        ('<a href="https://x.test/?a=1&amp;b=2">#1</a>', 2),
        ("😀", 2),  # outside the BMP: two UTF-16 code units
        ("周报", 2),
        ("<code>x</code>\n<i>y</i>", 3),
    ],
)
def test_visible_length_counts_what_telegram_counts(html_text: str, length: int) -> None:
    assert visible_length(html_text) == length
    assert utf16_length(parse_html(html_text)[0]) == length


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("<!channel> & <at user_id=\"all\">", '&lt;!channel&gt; &amp; &lt;at user_id="all"&gt;'),
        ("ping @all and @here", "ping @\u2060all and @\u2060here"),
        ("bell\x07 and \u202eevil", "bell and evil"),
        ("a@b.c", "a@\u2060b.c"),
    ],
)
def test_escaping_makes_github_text_inert(raw: str, escaped: str) -> None:
    assert m.esc(raw) == escaped


def test_links_go_only_to_http_and_tags_stay_on_one_line() -> None:
    assert m.link("https://github.com/a/b/pull/1", "#1") == (
        '<a href="https://github.com/a/b/pull/1">#1</a>')
    assert m.link('https://x.test/"><b>', "x") == '<a href="https://x.test/&quot;&gt;&lt;b&gt;">x</a>'
    assert m.link("tg://user?id=1", "someone") == "someone"
    assert m.link("javascript:alert(1)", "x") == "x"
    assert m.bold("two\nlines") == "<b>two lines</b>"
    assert m.code("a\r\nb") == "<code>a b</code>"


_TEXT = st.lists(
    st.sampled_from([*"ab <>&@\"'#/\n", "周", "报", "😀", "&amp;", "x" * 30]), max_size=60
).map("".join)
_PIECE = st.one_of(
    _TEXT.map(m.esc),
    _TEXT.map(m.bold),
    _TEXT.map(m.code),
    st.tuples(st.sampled_from(["https://github.com/a/b/pull/7", "tg://x"]), _TEXT)
    .map(lambda pair: m.link(*pair)),
)
_LINE = st.lists(_PIECE, min_size=1, max_size=8).map(" ".join)
_SECTION = st.lists(_LINE, min_size=1, max_size=6).map("\n".join)


@pytest.mark.slow  # many CPU seconds: in `make test-all`, not the quick loop
@settings(max_examples=150, deadline=None)
@given(sections=st.lists(_SECTION, min_size=1, max_size=8),
       limit=st.integers(min_value=40, max_value=600))
def test_splitting_never_cuts_a_tag_and_keeps_every_word(sections: list[str], limit: int) -> None:
    text = "\n\n".join(sections)
    messages = split_html(text, limit)
    for message in messages:
        plain, _ = parse_html(message)  # well formed on its own
        assert utf16_length(plain) <= limit
    # Nothing lost, nothing repeated: the same characters apart from the whitespace at cuts.
    posted = "".join(parse_html(message)[0] for message in messages)
    assert re.sub(r"\s", "", posted) == re.sub(r"\s", "", parse_html(text)[0])


def test_a_line_longer_than_a_message_is_cut_between_words_and_tags_reopened() -> None:
    line = "<b>" + " ".join(f"w{i}&amp;" for i in range(100)) + "</b> tail"
    messages = split_html(line, 50)
    assert len(messages) > 5
    for message in messages:
        parse_html(message)
        assert visible_length(message) <= 50
    assert all(message.startswith("<b>") for message in messages[:-1])
    joined = " ".join(parse_html(message)[0] for message in messages)
    assert joined.split() == parse_html(line)[0].split()


def test_sections_stay_whole_when_they_fit() -> None:
    sections = ["<b>One</b>\n" + "a " * 30, "<b>Two</b>\n" + "b " * 30, "<b>Three</b>\nc"]
    messages = split_html("\n\n".join(s.strip() for s in sections), 80)
    assert [message.split("\n")[0] for message in messages] == ["<b>One</b>", "<b>Two</b>"]
    assert messages[1].endswith("\n\n<b>Three</b>\nc")  # packed where it fits


def test_a_heading_is_not_left_at_the_end_of_a_message() -> None:
    text = "<b>First</b>\n" + "a " * 20 + "\n\n<b>Second</b>\nb"
    messages = split_html(text.replace("a \n", "a\n"), 50)
    assert all(not re.search(r"<b>\w+</b>$", message) for message in messages[:-1])


# --- reading updates ----------------------------------------------------------------------


def _update(data: dict[str, Any]) -> Update:
    return Update.de_json(data, Bot(TOKEN))


def test_an_update_becomes_text_chat_user_and_thread() -> None:
    question = question_from_update(_update(message_update(
        5, "/risks 7035", chat=group_chat(-100), sender=user(7, language_code="zh-hans"),
        message_id=9, thread_id=3)), bot_id=42)
    assert question is not None
    assert (question.delivery_key, question.channel_id, question.reply_to) == (
        "42:5", "-100", "9")  # in a group the answer quotes the question
    assert (question.text, question.user_id, question.thread) == ("/risks 7035", "7", "3")
    assert question.user_lang == "zh" and question.fixed_verb
    private = question_from_update(_update(message_update(6, "digest", chat=private_chat())),
                                   bot_id=42)
    assert private is not None and private.reply_to is None and not private.fixed_verb


@pytest.mark.parametrize(
    "data",
    [
        {"update_id": 1, "edited_message": message_update(1, "/help")["message"]},
        {"update_id": 1, "channel_post": {**message_update(1, "/help")["message"],
                                          "chat": {"id": -5, "type": "channel"}}},
        message_update(1, "/help", sender={"id": 9, "is_bot": True, "first_name": "other"}),
        {"update_id": 1, "message": {**message_update(1, "x")["message"], "text": None}},
    ],
)
def test_updates_that_are_not_questions_are_left_alone(data: dict[str, Any]) -> None:
    assert question_from_update(_update(data), bot_id=42) is None


@pytest.mark.parametrize(
    ("text", "preferred", "kind", "lang"),
    [
        ("/risks 7035", "zh", "risks", "zh"),  # the verb is English whatever the user speaks
        ("/risks 7035", "en", "risks", "en"),
        ("/subscribe npu", "zh", "subscribe", "zh"),
        ("/digest 上周", "en", "digest", "zh"),
        ("risks for #7035", "zh", "risks", "en"),  # free text speaks for itself
        ("#7035 有什么风险", "en", "risks", "zh"),
        ("@prdigest_bot summary #6974", "en", "summary", "en"),
        ("/summary@prdigest_bot 6974", "en", "summary", "en"),
    ],
)
def test_commands_are_read_in_the_users_language(
    text: str, preferred: str, kind: str, lang: str
) -> None:
    question = question_from_update(_update(message_update(1, text, chat=private_chat())),
                                    bot_id=42)
    assert question is not None
    command = read_command(question, preferred=preferred,  # type: ignore[arg-type]
                           bot_names=("prdigest_bot", *DEFAULT_BOT_NAMES))
    assert (command.kind, command.lang) == (kind, lang)


def test_retry_after_is_read_as_seconds_in_both_ptb_modes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import timedelta

    from telegram.error import RetryAfter

    monkeypatch.setenv("PTB_TIMEDELTA", "true")
    assert retry_after_seconds(RetryAfter(timedelta(seconds=3))) == 3.0
    monkeypatch.delenv("PTB_TIMEDELTA")
    with pytest.warns(Warning):  # PTB itself warns when the exception is built
        error = RetryAfter(5)
    assert retry_after_seconds(error) == 5.0
