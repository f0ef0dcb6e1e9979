"""Buttons that act, on Slack, Telegram and Feishu: the whole service in-process with
Redis, each platform's real SDK against its fake. A click carries the command its
button runs (`bot.actions`), signed as the platform signs it, and is answered as if the
clicker had typed it: once per click however often it is delivered, in the clicker's
language, under the same rules (a chat's admins change its settings), a forged click
refused before anything happens, unreadable action data answered politely. A click on
an answer's button replaces that answer (Slack `replace_original`, Telegram
`editMessageText`, a Feishu card patched), one on a digest's or a notice's is answered
beneath it, and an answer the platform will not replace comes beneath it too."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytest_asyncio

from bot.actions import encode_action
from bot.models import Command
from bot.store.redis.chat_settings import RedisChatSettings
from bot.store.redis.client import sync_client
from testkit.fakes.slack import RESPONSE_URL_USES
from testkit.fakes.telegram import group_chat, private_chat
from testkit.fakes.telegram import user as telegram_user
from testkit.reliability.harness import Service, service_in_process
from testkit.reliability.names import SLACK_ADMIN, SLACK_CHANNEL, TELEGRAM_CHAT, WEEK
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


async def test_feishu_a_settings_click_in_ones_own_chat_with_the_bot_is_taken(
        feishu_service: Service, stored: RedisChatSettings) -> None:
    # A click says nothing of the chat's kind; the chat's information says it is
    # one person's chat with the bot, whose only admin that person is.
    feishu_service.world.feishu.direct_chats.add("oc_direct0003")
    _, cards = await feishu_service.feishu_click(FOLLOW, event_id="p2p", chat="oc_direct0003")
    assert cards and NOT_ADMIN_EN not in said(cards) and NOT_ADMIN_ZH not in said(cards)
    assert list(stored.all()) == ["feishu:oc_direct0003"]


# --- in place: an answer is replaced, a digest or a notice answered beneath --------------


async def _post_answer(service: Service, platform: str, chat: str) -> str:
    """A PR's summary (an answer, its buttons answered in place), posted by the bot in
    `chat`: its message id."""
    handler = service.services.process.handler
    summary = await handler.handle(Command(kind="summary", repo="acme/lumen", pull=1201,
                                           lang="en"),
                                   channel=await handler.chat_channel(f"{platform}:{chat}"))
    assert summary.kind == "pull"
    [posted] = await service.services.process.adapters[platform].send_reply(chat, summary)
    return posted


async def _post_records(service: Service, platform: str, chat: str) -> list[str]:
    """This week's digest and a merged-PR notice, posted by the bot in `chat`: the ids
    of the digest's last message (its buttons) and of the notice."""
    handler = service.services.process.handler
    adapter = service.services.process.adapters[platform]
    channel = await handler.chat_channel(f"{platform}:{chat}")
    digest = await handler.handle(Command(kind="digest", week=WEEK, lang="en"),
                                  channel=channel)
    summary = await handler.handle(Command(kind="summary", repo="acme/lumen", pull=1201,
                                           lang="en"), channel=channel)
    assert digest.digest is not None
    notice = msgspec.structs.replace(summary, mode="merged")
    return [(await adapter.post_digest(chat, digest.digest))[-1],
            *(await adapter.send_reply(chat, notice))]


def button_data(node: Any) -> list[str]:
    """The action data of every button in a message (Block Kit `value`, Telegram
    `callback_data`, a Feishu card's callback `value.action`), in order."""
    found: list[str] = []
    if isinstance(node, dict):
        for key in ("value", "callback_data", "action"):
            if isinstance(node.get(key), str) and node[key].startswith('["pd1'):
                found.append(node[key])
        for value in node.values():
            found += button_data(value)
    elif isinstance(node, list):
        for value in node:
            found += button_data(value)
    return found


def one_button(data: list[str], *, in_place: bool) -> str:
    """The first button whose answer does (or does not) take its message's place."""
    return next(d for d in data if d.startswith('["pd1r"') == in_place)


async def test_slack_a_click_on_an_answer_replaces_it_once(service: Service) -> None:
    slack = service.world.slack
    ts = await _post_answer(service, "slack", SLACK_CHANNEL)
    [before] = slack.channel_messages(SLACK_CHANNEL)
    data = one_button(button_data(before["blocks"]), in_place=True)
    _, answers = await service.slack_click(data, message=ts, trigger="t-answer")
    assert len(answers) == 1 and answers[0]["replace_original"] is True
    [after] = slack.channel_messages(SLACK_CHANNEL)  # the one message, changed
    assert after["ts"] == ts and after["blocks"] != before["blocks"]
    assert after["blocks"] == answers[0]["blocks"]
    _, again = await service.slack_click(data, message=ts, trigger="t-answer")
    assert again == [] and slack.channel_messages(SLACK_CHANNEL) == [after]


async def test_slack_a_click_on_a_digest_or_a_notice_is_answered_beneath_it(
        service: Service) -> None:
    slack = service.world.slack
    for n, ts in enumerate(await _post_records(service, "slack", SLACK_CHANNEL)):
        before = slack.channel_messages(SLACK_CHANNEL)
        [record] = [m for m in before if m["ts"] == ts]
        data = one_button(button_data(record["blocks"]), in_place=False)
        _, answers = await service.slack_click(data, message=ts, trigger=f"t-record-{n}")
        after = slack.channel_messages(SLACK_CHANNEL)
        assert answers and all("replace_original" not in a for a in answers)
        assert after[:len(before)] == before and len(after) == len(before) + len(answers)


async def test_slack_a_click_after_its_response_url_lapsed_still_replaces_the_answer(
        service: Service) -> None:
    """Slack takes answers on a response_url for 30 minutes: a click on an answer an
    hour old still changes it, by `chat.update` of the bot's own message."""
    slack = service.world.slack
    ts = await _post_answer(service, "slack", SLACK_CHANNEL)
    [before] = slack.channel_messages(SLACK_CHANNEL)
    posted = len(slack.calls("chat.postMessage"))
    slack.fail_next("response", status=404, body="expired_url", times=RESPONSE_URL_USES)
    _, answers = await service.slack_click(
        one_button(button_data(before["blocks"]), in_place=True), message=ts)
    assert answers == []  # nothing went through the lapsed URL
    [after] = slack.channel_messages(SLACK_CHANNEL)
    assert after["ts"] == ts and after["blocks"] != before["blocks"]
    [update] = [c for c in slack.calls("chat.update") if c.ok]
    assert update.params()["ts"] == ts and len(slack.calls("chat.postMessage")) == posted


async def test_slack_an_answer_slack_would_not_replace_comes_beneath_it(service: Service
                                                                       ) -> None:
    slack = service.world.slack
    ts = await _post_answer(service, "slack", SLACK_CHANNEL)
    [before] = slack.channel_messages(SLACK_CHANNEL)
    slack.fail_next("response", status=404, body="expired_url")
    slack.fail_next("chat.update", body={"ok": False, "error": "cant_update_message"})
    _, answers = await service.slack_click(
        one_button(button_data(before["blocks"]), in_place=True), message=ts)
    assert len(answers) == 1 and "replace_original" not in answers[0]
    kept, added = slack.channel_messages(SLACK_CHANNEL)
    assert kept == before and added["blocks"] == answers[0]["blocks"]


async def test_slack_a_click_on_an_old_digest_is_answered_by_the_bot_beneath_it(
        service: Service) -> None:
    """A digest is clicked days after it was posted, long after its response_url
    lapsed: the bot posts the answer in the digest's thread itself."""
    slack = service.world.slack
    digest_ts, _ = await _post_records(service, "slack", SLACK_CHANNEL)
    before = slack.channel_messages(SLACK_CHANNEL)
    [record] = [m for m in before if m["ts"] == digest_ts]
    posted = len(slack.calls("chat.postMessage"))
    slack.fail_next("response", status=404, body="expired_url", times=RESPONSE_URL_USES)
    _, answers = await service.slack_click(
        one_button(button_data(record["blocks"]), in_place=False), message=digest_ts)
    assert answers == []
    posts = [c.params() for c in slack.calls("chat.postMessage")[posted:] if c.ok]
    added = slack.channel_messages(SLACK_CHANNEL)[len(before):]
    assert added and len(posts) == len(added)
    assert {post["thread_ts"] for post in posts} == {digest_ts}
    assert slack.channel_messages(SLACK_CHANNEL)[:len(before)] == before


async def test_slack_a_refusal_past_the_response_url_reaches_the_clicker_alone(
        service: Service, stored: RedisChatSettings) -> None:
    slack = service.world.slack
    slack.fail_next("response", status=404, body="expired_url", times=RESPONSE_URL_USES)
    _, answers = await service.slack_click(FOLLOW, channel="CNEW")
    assert answers == [] and stored.all() == {}
    [private] = slack.ephemerals
    assert private["channel"] == "CNEW" and private["user"] == "U0USER01"
    assert NOT_ADMIN_EN in said([private])
    assert slack.channel_messages("CNEW") == [] and slack.calls("chat.postMessage") == []


async def test_telegram_a_click_on_an_answer_edits_it_once(service: Service) -> None:
    telegram = service.world.telegram
    sent = await _post_answer(service, "telegram", TELEGRAM_CHAT)
    before = telegram.message(TELEGRAM_CHAT, int(sent))
    assert before is not None
    data = one_button(button_data(json.loads(before["reply_markup"])), in_place=True)
    count = len(telegram.sent())
    _, answers = await service.telegram_click(data, query_id="q-answer", message_id=int(sent))
    after = telegram.message(TELEGRAM_CHAT, int(sent))
    assert answers == [] and len(telegram.sent()) == count  # no message more
    assert after is not None and after["text"] != before["text"]
    [edit] = telegram.edits()
    assert (edit["chat_id"], edit["message_id"], edit["parse_mode"]) == (
        TELEGRAM_CHAT, sent, "HTML")
    _, again = await service.telegram_click(data, query_id="q-answer", message_id=int(sent),
                                            answered=False)
    assert again == [] and len(telegram.edits()) == 1
    assert telegram.message(TELEGRAM_CHAT, int(sent)) == after
    assert [c.fields["callback_query_id"] for c in telegram.calls("answerCallbackQuery")
            ] == ["q-answer"]


async def test_telegram_a_click_on_a_digest_or_a_notice_is_answered_in_reply(
        service: Service) -> None:
    telegram = service.world.telegram
    for n, sent in enumerate(await _post_records(service, "telegram", TELEGRAM_CHAT)):
        before = telegram.message(TELEGRAM_CHAT, int(sent))
        assert before is not None
        data = one_button(button_data(json.loads(before["reply_markup"])), in_place=False)
        _, answers = await service.telegram_click(data, query_id=f"q-record-{n}",
                                                  message_id=int(sent))
        assert answers and json.loads(answers[0]["reply_parameters"])["message_id"] == int(sent)
        assert telegram.message(TELEGRAM_CHAT, int(sent)) == before
    assert telegram.edits() == []


async def test_telegram_an_answer_telegram_will_not_edit_is_sent_in_reply(service: Service
                                                                          ) -> None:
    telegram = service.world.telegram
    sent = await _post_answer(service, "telegram", TELEGRAM_CHAT)
    shown = telegram.message(TELEGRAM_CHAT, int(sent))
    assert shown is not None
    data = one_button(button_data(json.loads(shown["reply_markup"])), in_place=True)
    # A message that is not the bot's (Telegram: "message can't be edited").
    _, answers = await service.telegram_click(data, query_id="q-foreign", message_id=77)
    assert len(answers) == 1 and json.loads(answers[0]["reply_parameters"])["message_id"] == 77
    refused = telegram.calls("editMessageText")
    assert len(refused) == 1 and refused[0].status == 400 and telegram.edits() == []


async def test_feishu_a_click_on_an_answer_updates_its_card_once(feishu_service: Service
                                                                  ) -> None:
    service, feishu = feishu_service, feishu_service.world.feishu
    sent = await _post_answer(service, "feishu", FEISHU_EN)
    before, count = feishu.card(sent), len(feishu.sent_cards())
    data = one_button(button_data(before), in_place=True)
    response, cards = await service.feishu_click(data, event_id="ev-answer", chat=FEISHU_EN,
                                                 message_id=sent)
    assert response.json()["toast"]["i18n"]["zh_cn"] == TOAST_ZH
    assert cards == [] and len(feishu.sent_cards()) == count  # no card more
    [patch] = feishu.patches()
    assert patch.path.endswith(f"/messages/{sent}")
    after = feishu.card(sent)
    assert after is not None and after != before and after["schema"] == "2.0"
    again, cards = await service.feishu_click(data, event_id="ev-answer", chat=FEISHU_EN,
                                              message_id=sent)
    assert again.status_code == 200 and cards == [] and len(feishu.patches()) == 1


async def test_feishu_a_card_update_answered_5xx_is_sent_again_and_lands_once(
        feishu_service: Service) -> None:
    service, feishu = feishu_service, feishu_service.world.feishu
    sent = await _post_answer(service, "feishu", FEISHU_EN)
    before, count = feishu.card(sent), len(feishu.sent_cards())
    data = one_button(button_data(before), in_place=True)
    feishu.fail_next(f"/messages/{sent}", status=503,
                     body={"code": 2200, "msg": "internal error"})
    _, cards = await service.feishu_click(data, event_id="ev-5xx", chat=FEISHU_EN,
                                          message_id=sent)
    tried = feishu.calls(f"/open-apis/im/v1/messages/{sent}")
    assert [r.method for r in tried] == ["PATCH", "PATCH"]  # the 503, then the one taken
    assert cards == [] and len(feishu.sent_cards()) == count  # in place, not beneath
    assert len(feishu.patches()) == 1 and feishu.card(sent) != before


async def test_feishu_a_click_on_a_digest_or_a_notice_is_answered_in_reply(
        feishu_service: Service) -> None:
    service, feishu = feishu_service, feishu_service.world.feishu
    for n, sent in enumerate(await _post_records(service, "feishu", FEISHU_EN)):
        before = feishu.card(sent)
        data = one_button(button_data(before), in_place=False)
        _, cards = await service.feishu_click(data, event_id=f"ev-record-{n}", chat=FEISHU_EN,
                                              message_id=sent)
        assert cards and {c.target for c in feishu.thread_replies(sent)} == {sent}
        assert feishu.card(sent) == before
    assert feishu.patches() == []


async def test_feishu_an_answer_feishu_will_not_update_comes_as_a_reply(
        feishu_service: Service) -> None:
    service, feishu = feishu_service, feishu_service.world.feishu
    sent = await _post_answer(service, "feishu", FEISHU_EN)
    data = one_button(button_data(feishu.card(sent)), in_place=True)
    # A card that is not one of the app's (Feishu: "The message is not found").
    _, cards = await service.feishu_click(data, event_id="ev-unknown", chat=FEISHU_EN,
                                          message_id="om_not_the_bots")
    assert len(cards) == 1 and feishu.thread_replies("om_not_the_bots")
    tried = feishu.calls("/open-apis/im/v1/messages/om_not_the_bots")
    assert [r.method for r in tried] == ["PATCH", "POST"] and feishu.patches() == []
