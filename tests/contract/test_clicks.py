"""Buttons that act, on Slack, Telegram and Feishu: the whole service in-process with
Redis, each platform's real SDK against its fake. A click carries the command its
button runs (`bot.actions`), signed as the platform signs it, and is answered as if the
clicker had typed it: once per click however often it is delivered, in the clicker's
language, under the same rules (a chat's admins change its settings), a forged click
refused before anything happens, unreadable action data answered politely."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.actions import encode_action
from bot.models import Command
from bot.store.redis.chat_settings import RedisChatSettings
from bot.store.redis.client import sync_client
from testkit.fakes.telegram import group_chat, private_chat
from testkit.fakes.telegram import user as telegram_user
from testkit.reliability.harness import Service, service_in_process
from testkit.reliability.names import SLACK_ADMIN, TELEGRAM_CHAT, WEEK
from testkit.reliability.world import World, world

CHAT = """
[chat]
repos = ["acme/*"]
"""


def action(**fields: Any) -> str:
    data = encode_action(Command(**fields))
    assert data is not None
    return data


# Each kind of button: its action, and words only its answer has (English).
BUTTONS: list[tuple[str, str, str]] = [
    ("risks", action(kind="risks", repo="acme/lumen", pull=1201), "#1201"),
    ("summary", action(kind="summary", repo="acme/lumen", pull=1201), "#1201"),
    ("follow a topic", action(kind="subscribe", topics=("checkpoint",)), "Subscribed to"),
    ("unfollow a topic", action(kind="unsubscribe", topics=("checkpoint",)), "Unsubscribed from"),
    ("the week before", action(kind="digest", week=WEEK), WEEK),
    ("settings", action(kind="settings"), "What this chat gets"),
]
FOLLOW = action(kind="follow", repo="acme/lumen")
MALFORMED = ['["pd1","rm -rf /"]', "risks 7035", '["pd9","risks","acme/lumen",1201]', "{}"]

NOT_ADMIN_EN = "Only this chat's admins may change its settings; nothing was changed."
NOT_ADMIN_ZH = "只有本群管理员可以修改设置，没有做任何更改。"
UNREADABLE_EN = "I could not read that button"
UNREADABLE_ZH = "我读不懂这个按钮"


@pytest.fixture
def fakes() -> Iterator[World]:
    with world() as started:
        yield started


@pytest_asyncio.fixture(loop_scope="function")
async def service(fakes: World, redis_url: str, tmp_path: Path) -> AsyncIterator[Service]:
    async with service_in_process(fakes, redis_url, tmp_path, extra=CHAT) as running:
        yield running


@pytest.fixture
def stored(redis_url: str) -> Iterator[RedisChatSettings]:
    client = sync_client(redis_url)
    yield RedisChatSettings(client)
    client.close()


def said(answers: list[dict[str, Any]]) -> str:
    return json.dumps(answers, ensure_ascii=False)


# --- Slack -------------------------------------------------------------------------------


async def test_slack_each_button_is_answered_once_on_its_response_url(service: Service
                                                                      ) -> None:
    for name, data, words in BUTTONS:
        trigger = f"trigger-{name}"
        response, answers = await service.slack_click(data, user=SLACK_ADMIN, trigger=trigger)
        assert response.status_code == 200, name
        assert answers and words in said(answers), name
        if name != "the week before":  # a digest may take several messages
            assert len(answers) == 1, name
        again, repeated = await service.slack_click(data, user=SLACK_ADMIN, trigger=trigger)
        assert again.status_code == 200 and repeated == [], name
    assert service.world.slack.calls("chat.postMessage") == []


async def test_slack_a_forged_click_is_refused_and_does_nothing(service: Service,
                                                                stored: RedisChatSettings
                                                                ) -> None:
    service.world.slack.workspace_admins.add("U0ADMIN9")
    response, answers = await service.slack_click(FOLLOW, user="U0ADMIN9", channel="CNEW",
                                                  secret="not-the-signing-secret")
    assert response.status_code == 401
    assert answers == [] and stored.all() == {}
    assert service.world.slack.calls("response") == []
    # The same click signed with the app's secret does act.
    response, answers = await service.slack_click(FOLLOW, user="U0ADMIN9", channel="CNEW")
    assert response.status_code == 200 and "This chat now follows" in said(answers)
    assert "slack:CNEW" in stored.all()


@pytest.mark.parametrize("data", MALFORMED)
async def test_slack_unreadable_action_data_gets_a_polite_answer(service: Service,
                                                                 data: str) -> None:
    response, answers = await service.slack_click(data)
    assert response.status_code == 200
    assert len(answers) == 1 and UNREADABLE_EN in said(answers)
    service.world.slack.locales["U0USER01"] = "zh-CN"
    _, answers = await service.slack_click(data)
    assert UNREADABLE_ZH in said(answers)


async def test_slack_a_settings_click_by_someone_not_an_admin_is_refused_in_their_language(
        service: Service, stored: RedisChatSettings) -> None:
    _, answers = await service.slack_click(FOLLOW, channel="CNEW")
    assert NOT_ADMIN_EN in said(answers)
    service.world.slack.locales["U0USER01"] = "zh-CN"  # asked of users.info
    _, answers = await service.slack_click(FOLLOW, channel="CNEW")
    assert NOT_ADMIN_ZH in said(answers)
    assert stored.all() == {}


# --- Telegram ----------------------------------------------------------------------------


async def test_telegram_each_button_is_answered_once_in_reply_to_the_message_clicked(
        service: Service) -> None:
    telegram = service.world.telegram
    for n, (name, data, words) in enumerate(BUTTONS):
        query = f"q-{n}"
        response, answers = await service.telegram_click(data, query_id=query,
                                                         message_id=600 + n)
        assert response.status_code == 200, name
        assert answers and words in said(answers), name
        assert all(a["chat_id"] == TELEGRAM_CHAT for a in answers)
        assert json.loads(answers[0]["reply_parameters"])["message_id"] == 600 + n
        if name != "the week before":
            assert len(answers) == 1, name
        again, repeated = await service.telegram_click(data, query_id=query, answered=False)
        assert again.status_code == 200 and repeated == [], name
    answered = [c.fields["callback_query_id"] for c in telegram.calls("answerCallbackQuery")]
    assert answered == [f"q-{n}" for n in range(len(BUTTONS))]
    assert all(c.accepted for c in telegram.calls("answerCallbackQuery"))


async def test_telegram_a_click_without_the_secret_token_is_refused_and_does_nothing(
        service: Service, stored: RedisChatSettings) -> None:
    for secret in ("", "tg-webhook-SECRET_77aa88bX"):
        response, answers = await service.telegram_click(
            FOLLOW, query_id="forged", chat=private_chat(4242), secret=secret,
            answered=False)
        assert response.status_code == 401
        assert answers == []
    assert service.world.telegram.calls("answerCallbackQuery") == []
    assert stored.all() == {}


@pytest.mark.parametrize("data", MALFORMED)
async def test_telegram_unreadable_action_data_gets_a_polite_answer(service: Service,
                                                                    data: str) -> None:
    _, answers = await service.telegram_click(data, query_id="odd-en")
    assert len(answers) == 1 and UNREADABLE_EN in said(answers)
    _, answers = await service.telegram_click(data, query_id="odd-zh",
                                              sender=telegram_user(language_code="zh-hans"))
    assert UNREADABLE_ZH in said(answers)


async def test_telegram_a_settings_click_by_someone_not_an_admin_is_refused_in_their_language(
        service: Service, stored: RedisChatSettings) -> None:
    group = group_chat(-1007770001)
    _, answers = await service.telegram_click(FOLLOW, query_id="en", chat=group)
    assert NOT_ADMIN_EN in said(answers)
    _, answers = await service.telegram_click(FOLLOW, query_id="zh", chat=group,
                                              sender=telegram_user(language_code="zh-hans"))
    assert NOT_ADMIN_ZH in said(answers)
    assert stored.all() == {}
    service.world.telegram.chat_admins["-1007770001"] = {4242}
    _, answers = await service.telegram_click(FOLLOW, query_id="admin", chat=group)
    assert "This chat now follows" in said(answers)
    assert "telegram:-1007770001" in stored.all()


# --- Feishu ------------------------------------------------------------------------------

FEISHU_EN = "oc_english0001"
FEISHU_CHANNELS = f"""
[[channels]]
platform = "feishu"
id = "{FEISHU_EN}"
repo = "acme/lumen"
lang = "en"
"""
TOAST_ZH = "正在处理…"


@pytest_asyncio.fixture(loop_scope="function")
async def feishu_service(fakes: World, redis_url: str, tmp_path: Path
                         ) -> AsyncIterator[Service]:
    async with service_in_process(fakes, redis_url, tmp_path,
                                  extra=CHAT + FEISHU_CHANNELS) as running:
        yield running


async def test_feishu_each_button_is_answered_once_in_reply_to_the_card_clicked(
        feishu_service: Service) -> None:
    service = feishu_service
    for n, (name, data, words) in enumerate(BUTTONS):
        response, cards = await service.feishu_click(data, event_id=f"ev-{n}", chat=FEISHU_EN,
                                                     message_id=f"om_card_{n}")
        assert response.status_code == 200, name
        toast = response.json()["toast"]
        assert toast["i18n"]["zh_cn"] == TOAST_ZH and toast["i18n"]["en_us"] != TOAST_ZH
        assert cards and words in said(cards), name
        if name != "the week before":
            assert len(cards) == 1, name
        assert {c.target for c in service.world.feishu.sent_cards()[-len(cards):]} == {
            f"om_card_{n}"}
        again, repeated = await service.feishu_click(data, event_id=f"ev-{n}", chat=FEISHU_EN)
        assert again.status_code == 200 and repeated == [], name
        assert "toast" not in again.json()


@pytest.mark.parametrize("forgery", [
    {"token": "feishu-verify-TOKEN-6678"},
    {"key": "feishu-encrypt-KEY-000000", "sign_key": "feishu-encrypt-KEY-000000"},
    {"sign_key": "feishu-encrypt-KEY-000000"},
])
async def test_feishu_a_forged_click_is_refused_and_does_nothing(
        feishu_service: Service, stored: RedisChatSettings, forgery: dict[str, str]) -> None:
    service = feishu_service
    service.world.feishu.chat_managers["oc_newchat01"] = ["ou_alice"]
    response, cards = await service.feishu_click(FOLLOW, event_id="forged", chat="oc_newchat01",
                                                 **forgery)
    assert response.status_code == 401
    assert cards == [] and stored.all() == {}
    # The same click, as Feishu signs it, acts.
    response, cards = await service.feishu_click(FOLLOW, event_id="forged", chat="oc_newchat01")
    assert response.status_code == 200 and "本群已关注" in said(cards)


@pytest.mark.parametrize("data", MALFORMED)
async def test_feishu_unreadable_action_data_gets_a_polite_answer(feishu_service: Service,
                                                                  data: str) -> None:
    _, cards = await feishu_service.feishu_click(data, event_id="odd-en", chat=FEISHU_EN)
    assert len(cards) == 1 and UNREADABLE_EN in said(cards)
    _, cards = await feishu_service.feishu_click(data, event_id="odd-zh")
    assert len(cards) == 1 and UNREADABLE_ZH in said(cards)


async def test_feishu_a_settings_click_by_someone_not_an_admin_is_refused_in_the_chats_language(
        feishu_service: Service, stored: RedisChatSettings) -> None:
    _, cards = await feishu_service.feishu_click(FOLLOW, event_id="en", chat=FEISHU_EN)
    assert NOT_ADMIN_EN in said(cards)
    _, cards = await feishu_service.feishu_click(FOLLOW, event_id="zh", chat="oc_newchat02")
    assert NOT_ADMIN_ZH in said(cards)
    assert stored.all() == {}
