"""The checks that decide "live mention" catch what they must, and only that: a check
that never fires would make every other reliability test pass for nothing."""

from __future__ import annotations

import json

import pytest

from testkit.reliability.live import feishu_live, html_live, slack_live, telegram_live


@pytest.mark.parametrize("text", [
    "<!channel> hi", "<!here>", "<!everyone>", "<!subteam^S123>", "<@U0ADMIN1>",
    "<#C0123456>", "<javascript:alert(1)|click>", "bell \x07",
])
def test_slack_live_text_is_caught(text: str) -> None:
    assert slack_live({"text": text})
    assert slack_live({"blocks": [{"type": "section", "text": {"type": "mrkdwn",
                                                               "text": text}}]})


def test_slack_link_names_is_caught() -> None:
    assert slack_live({"text": "hi", "link_names": True})


@pytest.mark.parametrize("text", [
    "&lt;!channel&gt; @all @here", "<https://github.com/acme/lumen/pull/1|#1>",
    "*bold* `code` &amp;",
])
def test_slack_inert_text_passes(text: str) -> None:
    assert slack_live({"text": text, "blocks": json.dumps(
        [{"type": "section", "text": {"type": "mrkdwn", "text": text}}])}) == []


@pytest.mark.parametrize("text", [
    '<a href="tg://user?id=42">x</a>', "hello @somebody", '<a href="javascript:x">y</a>',
    "<script>x</script>", "unescaped < here",
])
def test_telegram_live_text_is_caught(text: str) -> None:
    assert telegram_live({"text": text, "parse_mode": "HTML"})


@pytest.mark.parametrize("text", [
    "@\u2060all &lt;b&gt;", '<a href="https://github.com/x">#1</a>', "<b>bold</b> a@b",
])
def test_telegram_inert_text_passes(text: str) -> None:
    assert telegram_live({"text": text, "parse_mode": "HTML"}) == []


@pytest.mark.parametrize("text", [
    '<at user_id="all">all</at>', "<at id=all></at>", "< AT id=all>",
    "[x](javascript:alert(1))", "[x](tg://user?id=1)",
])
def test_feishu_live_text_is_caught(text: str) -> None:
    assert feishu_live({"body": {"elements": [{"tag": "markdown", "content": text}]}})


def test_feishu_inert_text_passes() -> None:
    card = {"body": {"elements": [{"tag": "markdown", "content":
                                   "&#60;at user&#95;id=&#34;all&#34;&#62; [#1](https://x.y/1)"}]}}
    assert feishu_live(card) == []


@pytest.mark.parametrize("page", [
    "<p><script>alert(1)</script></p>", '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">x</a>', '<at user_id="all"></at>',
    '<p onclick="x()">y</p>',
])
def test_html_live_markup_is_caught(page: str) -> None:
    assert html_live(page)


def test_html_escaped_text_passes() -> None:
    page = ('<html><head><meta charset="utf-8"></head><body><p>&lt;script&gt; '
            'onerror=&#34;x&#34; &lt;at user_id=all&gt;</p><a href="https://x.y">z</a>'
            "</body></html>")
    assert html_live(page) == []
