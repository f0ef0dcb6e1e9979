"""A Slack user's language, asked of `users.info` the one way both the Home tab and a
click's answer ask it (`adapters.slack.admins.user_lang`): their locale when Slack gives
one, else None - a refusal or an unreachable Slack logged at INFO, never raised."""

from __future__ import annotations

import logging
import socket

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.admins import user_lang
from adapters.slack.clicks import with_clicker_lang
from bot.chat.inbound import Question
from bot.models import Lang
from testkit.fakes.slack import BOT_TOKEN, FakeSlack

USER = "U0USER01"


def client_of(base_url: str) -> AsyncWebClient:
    # No retry handlers: an unreachable Slack is told at once, without a back-off.
    return AsyncWebClient(token=BOT_TOKEN, base_url=base_url, retry_handlers=[])


def unreachable() -> str:
    """The API URL of a port nothing listens on."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    return f"http://127.0.0.1:{port}/api/"


def click(lang: Lang | None = None) -> Question:
    return Question(platform="slack", channel_id="C0CHAN001", user_id=USER, text="",
                    action="digest", user_lang=lang)


@pytest.mark.parametrize(("locale", "lang"), [("zh-CN", "zh"), ("en-US", "en"), (None, None)])
async def test_a_users_language_is_their_locale(fake_slack: FakeSlack, locale: str | None,
                                                lang: str | None) -> None:
    fake_slack.locales = {USER: locale} if locale else {}
    assert await user_lang(client_of(fake_slack.base_url), USER) == lang
    [asked] = fake_slack.calls("users.info")
    assert asked.params()["include_locale"] in ("1", "true", "True")


async def test_a_refusal_or_an_unreachable_slack_is_logged_and_gives_no_language(
        fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture) -> None:
    fake_slack.locales = {USER: "zh-CN"}
    fake_slack.fail_next("users.info", body={"ok": False, "error": "missing_scope"})
    with caplog.at_level(logging.INFO, logger="adapters.slack.admins"):
        assert await user_lang(client_of(fake_slack.base_url), USER) is None
        assert await user_lang(client_of(unreachable()), USER) is None
    said = [(r.levelno, r.getMessage()) for r in caplog.records
            if r.name == "adapters.slack.admins"]
    assert said[0] == (logging.INFO, f"slack: locale of {USER} unreadable: missing_scope")
    assert said[1][0] == logging.INFO and "ClientConnectorError" in said[1][1]


async def test_a_click_keeps_the_chats_language_when_slack_cannot_tell(
        fake_slack: FakeSlack) -> None:
    fake_slack.locales = {USER: "zh-CN"}
    assert (await with_clicker_lang(client_of(fake_slack.base_url), click())).user_lang == "zh"
    for base_url in (unreachable(), fake_slack.base_url):  # the fake has no locale below
        fake_slack.locales = {}
        assert (await with_clicker_lang(client_of(base_url), click())).user_lang is None
    # A click whose payload carried a locale is not asked about.
    asked = len(fake_slack.calls("users.info"))
    assert (await with_clicker_lang(client_of(fake_slack.base_url), click("en"))).user_lang \
        == "en"
    assert len(fake_slack.calls("users.info")) == asked
