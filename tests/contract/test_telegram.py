"""The Telegram adapter with the real python-telegram-bot against the fake Bot API.

Every assertion is about what Telegram received: the form fields of `sendMessage`
(HTML text, parse mode, keyboard JSON), the webhook registration, and what did not
arrive when a request was refused or a delivery was a repeat.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from adapters.registry import platform_spec
from adapters.telegram.adapter import WEBHOOK_PATH, TelegramAdapter
from bot.actions import encode_action
from bot.errors import ConfigError
from bot.models import Command
from bot.store.coordination import Coordination
from testkit.coordination import local_claims
from testkit.fakes.telegram import (
    FakeTelegram,
    anonymous_admin,
    click_update,
    group_chat,
    message_update,
    private_chat,
    user,
)
from testkit.telegram_bot import (
    CONFIG,
    GROUP,
    PRIVATE,
    SECRET,
    SNAPSHOT,
    SpyHandler,
    post_update,
    running,
    settle,
    wait_sent,
)

# --- the webhook --------------------------------------------------------------------------


async def test_a_question_in_the_group_gets_its_answer(tg: FakeTelegram,
                                                       port: Coordination) -> None:
    spy = SpyHandler()
    async with running(tg, port, handler=spy) as (_, http):
        update = message_update(10, "/risks@prdigest_bot 1201", chat=group_chat(GROUP),
                                message_id=77)
        response = await post_update(http, update)
        assert response.status_code == 200
        [fields] = await wait_sent(tg)
    assert fields["chat_id"] == str(GROUP)
    assert fields["parse_mode"] == "HTML"
    assert json.loads(fields["reply_parameters"]) == {
        "message_id": 77, "allow_sending_without_reply": True}
    keyboard = json.loads(fields["reply_markup"])["inline_keyboard"]
    assert keyboard[0][0] == {"text": "Open #1201",
                              "url": "https://github.com/acme/lumen/pull/1201"}
    # The other buttons run a command: their data is the command, within 64 bytes.
    assert all(len(b["callback_data"].encode()) <= 64 for row in keyboard for b in row
               if "url" not in b)
    assert fields["text"].startswith(
        '<b><a href="https://github.com/acme/lumen/pull/1201">#1201</a> [rollout, npu] feat: '
        "paged KV cache for the Ascend rollout engine (merged)</b>\n")
    assert ("• [high] Critical finding: may lose or overwrite data or race under concurrency"
            in fields["text"])
    [(command, channel, user_id)] = spy.asked
    assert (command.kind, command.pull, command.lang) == ("risks", 1201, "en")
    assert channel is not None and channel.key == f"telegram:{GROUP}"
    assert user_id == "4242"


async def test_a_digest_asked_in_the_group_comes_in_several_messages(
    tg: FakeTelegram, port: Coordination, small_messages: None
) -> None:
    async with running(tg, port) as (_, http):
        update = message_update(22, "/digest@prdigest_bot 2026-W29", chat=group_chat(GROUP),
                                message_id=88)
        await post_update(http, update)
        await wait_sent(tg, 2)
        await settle()
    sent = tg.sent()
    assert len(sent) == 2
    assert json.loads(sent[0]["reply_parameters"])["message_id"] == 88  # answers the question
    assert "reply_parameters" not in sent[1]
    assert sent[0]["text"].startswith("<b>acme/lumen weekly report, 2026 week 29")
    assert "reply_markup" in sent[1] and "reply_markup" not in sent[0]


async def test_a_chinese_question_in_private_is_answered_in_chinese(
    tg: FakeTelegram, port: Coordination
) -> None:
    async with running(tg, port) as (_, http):
        update = message_update(11, "#99999 有什么风险", chat=private_chat(PRIVATE))
        assert (await post_update(http, update)).status_code == 200
        [fields] = await wait_sent(tg)
    assert fields == {
        "chat_id": str(PRIVATE),
        "text": "<code>acme/lumen</code> 没有 PR #99999，或者它不在我已有的数据中。",
        "parse_mode": "HTML",
        "link_preview_options": '{"is_disabled": true}',
    }


# The help's examples name the chat's repository's newest PR the data holds.
NEWEST = max(p.number for p in SNAPSHOT.pulls)


@pytest.mark.parametrize(
    ("text", "language_code", "expected"),
    [
        ("what's up?", "en", "Sorry, I did not understand “what's up?”."),
        ("随便聊聊", "en", "“随便聊聊”"),
        ("/help", "zh-hans", f"<code>#{NEWEST} 有什么风险</code> — "),  # the chat's language
        ("/start", "en", f"<code>#{NEWEST} 有什么风险</code> — "),
    ],
)
async def test_text_outside_the_grammar_gets_help_in_the_users_language(
    tg: FakeTelegram, port: Coordination, text: str, language_code: str, expected: str
) -> None:
    async with running(tg, port) as (_, http):
        update = message_update(12, text, chat=private_chat(PRIVATE),
                                sender=user(language_code=language_code))
        await post_update(http, update)
        [fields] = await wait_sent(tg)
    assert expected in fields["text"]
    assert f"/risks {NEWEST}" in fields["text"]  # how Telegram takes a command


async def test_an_unconfigured_private_chat_gets_help_in_the_users_telegram_language(
    tg: FakeTelegram, port: Coordination
) -> None:
    async with running(tg, port) as (_, http):
        update = message_update(13, "/help", chat=private_chat(99),
                                sender=user(99, language_code="zh-hans"))
        await post_update(http, update)
        [fields] = await wait_sent(tg)
    assert fields["chat_id"] == "99"
    # A chat that follows no repository: a plain stand-in number, no other team's PR.
    assert "<code>#123 有什么风险</code> — " in fields["text"] and "/risks 123" in fields["text"]
    assert "7035" not in fields["text"]


@pytest.mark.parametrize(
    ("text", "reply_to_bot", "answered"),
    [
        ("@prdigest_bot summary #1202", False, True),
        ("@PrDigest_Bot summary #1202", False, True),  # usernames ignore case
        ("summary #1202", True, True),  # a reply to the bot
        ("/summary 1202", False, True),  # a command without @name is for every bot
        ("/summary@prdigest_bot 1202", False, True),
        ("/summary@other_bot 1202", False, False),
        ("/frobnicate@other_bot", False, False),
        ("summary #1202", False, False),  # people talking among themselves
        ("hey @someone_else summary #1202", False, False),
    ],
)
async def test_in_a_group_only_what_is_addressed_to_the_bot_is_answered(
    tg: FakeTelegram, port: Coordination, text: str, reply_to_bot: bool, answered: bool
) -> None:
    bot_message = {"message_id": 5, "date": 0, "chat": group_chat(GROUP), "text": "earlier",
                   "from": {"id": tg.bot_id, "is_bot": True, "first_name": "prdigest",
                            "username": tg.username}}
    spy = SpyHandler()
    async with running(tg, port, handler=spy) as (_, http):
        update = message_update(14, text, chat=group_chat(GROUP),
                                reply_to_bot=bot_message if reply_to_bot else None)
        assert (await post_update(http, update)).status_code == 200
        if answered:
            [fields] = await wait_sent(tg)
            assert "grad norm explodes when micro-batches are empty" in fields["text"]
        else:
            await settle()
            assert tg.calls("sendMessage") == [] and spy.asked == []


async def test_an_unknown_command_addressed_to_the_bot_gets_help(
    tg: FakeTelegram, port: Coordination
) -> None:
    async with running(tg, port) as (_, http):
        await post_update(http, message_update(15, "/frobnicate@prdigest_bot",
                                               chat=group_chat(GROUP)))
        [fields] = await wait_sent(tg)
    # The echo is inert too: a word joiner keeps it from being a mention.
    assert "Sorry, I did not understand “/frobnicate@\u2060prdigest_bot”." in fields["text"]


async def test_a_question_in_a_forum_topic_is_answered_in_that_topic(
    tg: FakeTelegram, port: Coordination
) -> None:
    async with running(tg, port) as (_, http):
        await post_update(http, message_update(16, "/topics", chat=group_chat(GROUP),
                                               thread_id=321))
        [fields] = await wait_sent(tg)
    assert fields["message_thread_id"] == "321"
    assert fields["text"].startswith("This chat follows <code>trainer</code>.")


async def test_a_failing_handler_still_gets_the_user_an_answer(
    tg: FakeTelegram, port: Coordination
) -> None:
    async with running(tg, port, handler=SpyHandler(fail=True)) as (_, http):
        await post_update(http, message_update(17, "/summary 1202", chat=group_chat(GROUP)))
        [fields] = await wait_sent(tg)
    assert fields["text"] == (
        "Something went wrong on my side; it has been logged. Please try again.")
    assert "boom" not in fields["text"] and "Traceback" not in fields["text"]


@pytest.mark.parametrize("secret", [None, "", "wrong", SECRET + "x", SECRET[:-1]])
async def test_a_wrong_or_missing_secret_token_is_refused_and_causes_nothing(
    tg: FakeTelegram, port: Coordination, secret: str | None
) -> None:
    spy = SpyHandler()
    async with running(tg, port, handler=spy) as (_, http):
        response = await post_update(http, message_update(18, "/help"), secret=secret)
        assert response.status_code == 401
        await settle()
    assert tg.calls("sendMessage") == [] and spy.asked == []
    # The refused update was not marked seen: the genuine delivery is still answered.
    async with running(tg, port) as (_, http):
        await post_update(http, message_update(18, "/help"))
        await wait_sent(tg)


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b"[1, 2]", b'"update"', b"{}", b'{"update_id": "5"}',
     b'{"update_id": true}', b'{"update_id": 19, "message": "hello"}',
     b'{"update_id": 19, "message": {"message_id": "x"}}', b"\xff\xfe"],
)
async def test_bad_updates_get_a_4xx_and_cause_nothing(
    tg: FakeTelegram, port: Coordination, body: bytes
) -> None:
    async with running(tg, port) as (_, http):
        response = await post_update(http, body)
        assert 400 <= response.status_code < 500
        await settle()
    assert tg.calls("sendMessage") == []


async def test_a_too_large_body_is_refused(tg: FakeTelegram, port: Coordination) -> None:
    async with running(tg, port) as (_, http):
        response = await post_update(http, b"{" + b" " * (1 << 21) + b"}")
    assert response.status_code == 413


async def test_a_redelivered_update_is_answered_once(tg: FakeTelegram, port: Coordination) -> None:
    update = message_update(20, "/summary 1202", chat=group_chat(GROUP))
    async with running(tg, port) as (_, http):
        statuses = [(await post_update(http, update)).status_code for _ in range(3)]
        await wait_sent(tg)
        await settle()
    assert statuses == [200, 200, 200]
    assert len(tg.calls("sendMessage")) == 1


async def test_two_replicas_sharing_redis_answer_an_update_once(
    tg: FakeTelegram, port: Coordination
) -> None:
    update = message_update(21, "/summary 1202", chat=group_chat(GROUP))
    async with running(tg, port) as (_, first), running(tg, port) as (_, second):
        responses = await asyncio.gather(post_update(first, update), post_update(second, update))
        await wait_sent(tg)
        await settle()
        # Telegram sends again what was refused: by then it was answered.
        again = await post_update(second, update)
        await settle()
    # The replica that found the other's claim cannot tell it at work from dead: it asks
    # Telegram to send the update again, and never acknowledges it unanswered.
    assert sorted(r.status_code for r in responses) == [200, 503]
    assert again.status_code == 200
    assert len(tg.calls("sendMessage")) == 1


async def test_start_registers_the_webhook_and_the_command_menu(
    tg: FakeTelegram, port: Coordination
) -> None:
    url = "https://bot.example.test/telegram/webhook"
    async with running(tg, port, webhook_url=url) as (adapter, _):
        assert adapter.status()["webhook_registered"] is True
        await adapter.start()  # idempotent
    [registration] = tg.calls("setWebhook")
    assert registration.fields["url"] == url
    assert registration.fields["secret_token"] == SECRET
    assert json.loads(registration.fields["allowed_updates"]) == ["message", "callback_query"]
    menus = tg.calls("setMyCommands")
    assert [m.fields.get("language_code") for m in menus] == [None, "zh"]
    assert [c["command"] for c in menus[0].json_field("commands")] == [
        "risks", "summary", "digest", "topics", "subscribe", "unsubscribe", "pending",
        "follow", "unfollow", "schedule", "timezone", "lang", "mute", "unmute", "settings",
        "help"]
    assert menus[1].json_field("commands")[0]["description"] == "查看某个 PR 的风险观察"


# --- long polling -------------------------------------------------------------------------


async def test_long_polling_answers_what_get_updates_brings(
    tg: FakeTelegram, port: Coordination
) -> None:
    async with running(tg, port, polling=True, secret_token=None,
                       poll_timeout=1) as (adapter, _):
        assert adapter.routes() == []
        assert adapter.status()["mode"] == "polling"
        tg.push_update(message_update(30, "summary #1202", chat=private_chat(PRIVATE)))
        [fields] = await wait_sent(tg)
    assert fields["chat_id"] == str(PRIVATE)
    assert "grad norm explodes when micro-batches are empty" in fields["text"]
    assert tg.calls("deleteWebhook")  # polling and a webhook exclude each other
    polls = tg.calls("getUpdates")
    assert json.loads(polls[0].fields["allowed_updates"]) == ["message", "callback_query"]
    assert any(p.fields.get("offset") == "31" for p in polls)  # the update was confirmed


async def test_long_polling_answers_a_click_once(tg: FakeTelegram, port: Coordination
                                                 ) -> None:
    data = encode_action(Command(kind="summary", pull=1202))
    assert data is not None
    async with running(tg, port, polling=True, secret_token=None,
                       poll_timeout=1) as _:
        click = click_update(40, data, query_id="q-poll", chat=private_chat(PRIVATE),
                             message_id=77)
        tg.push_update(click)
        tg.push_update({**click, "update_id": 41})  # the same click, delivered again
        [fields] = await wait_sent(tg)
        await settle()
    assert "grad norm explodes when micro-batches are empty" in fields["text"]
    assert json.loads(fields["reply_parameters"])["message_id"] == 77
    assert len(tg.sent()) == 1
    [answered] = tg.calls("answerCallbackQuery")
    assert answered.fields["callback_query_id"] == "q-poll" and answered.accepted


# --- configuration -----------------------------------------------------------------------


def test_from_config_needs_its_secrets_in_the_environment(
    monkeypatch: pytest.MonkeyPatch, tg: FakeTelegram
) -> None:
    deduper = local_claims()
    handler = SpyHandler()
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET", raising=False)
    assert TelegramAdapter.from_config(CONFIG, handler, deduper) is None
    spec = platform_spec("telegram")
    assert spec is not None and not spec.has_credentials(CONFIG)
    assert spec.unconfigured_status(CONFIG) == {
        "platform": "telegram", "configured": False,
        "missing_env": ["TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"]}
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", tg.token)
    assert TelegramAdapter.from_config(CONFIG, handler, deduper) is None  # webhook, no secret
    polling = TelegramAdapter.from_config(CONFIG, handler, deduper, polling=True,
                                          api_url=tg.base_url)
    assert polling is not None and polling.routes() == []
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "has spaces")
    with pytest.raises(ConfigError, match="TELEGRAM_WEBHOOK_SECRET") as raised:
        TelegramAdapter.from_config(CONFIG, handler, deduper)
    assert "has spaces" not in str(raised.value)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", SECRET)
    adapter = TelegramAdapter.from_config(CONFIG, handler, deduper, api_url=tg.base_url)
    assert adapter is not None
    assert [route.path for route in adapter.routes()] == [WEBHOOK_PATH]  # type: ignore[attr-defined]
    status = adapter.status()
    assert status == {"platform": "telegram", "configured": True, "mode": "webhook",
                      "route": WEBHOOK_PATH, "running": False, "bot": None,
                      "webhook_registered": False}
    assert tg.token not in json.dumps(status) and SECRET not in json.dumps(status)


async def test_an_anonymous_group_admin_is_answered(tg: FakeTelegram, port: Coordination) -> None:
    """An admin posting as the group arrives from `GroupAnonymousBot` (a bot) with the
    group as `sender_chat`: it is a person asking, so it is answered, as the group."""
    spy = SpyHandler()
    group = group_chat(GROUP)
    async with running(tg, port, handler=spy) as (_, http):
        update = message_update(60, "/summary@prdigest_bot 1202", chat=group,
                                sender=anonymous_admin(), sender_chat=group)
        assert (await post_update(http, update)).status_code == 200
        [fields] = await wait_sent(tg)
    assert fields["chat_id"] == str(GROUP)
    assert "grad norm explodes when micro-batches are empty" in fields["text"]
    [(command, channel, user_id)] = spy.asked
    assert (command.kind, command.pull) == ("summary", 1202)
    assert channel is not None and channel.key == f"telegram:{GROUP}"
    assert user_id is None  # no person to check admin rights against


async def test_other_bots_and_channel_forwards_stay_unanswered(tg: FakeTelegram,
                                                              port: Coordination) -> None:
    group = group_chat(GROUP)
    channel = {"id": -1009999999999, "type": "channel", "title": "announcements"}
    other_bot = {"id": 5550001, "is_bot": True, "first_name": "Other", "username": "other_bot"}
    spy = SpyHandler()
    async with running(tg, port, handler=spy) as (_, http):
        for update_id, sender, sender_chat in ((61, other_bot, None),
                                               (62, anonymous_admin(), channel)):
            update = message_update(update_id, "/summary@prdigest_bot 1202", chat=group,
                                    sender=sender, sender_chat=sender_chat)
            assert (await post_update(http, update)).status_code == 200
        await settle()
    assert tg.calls("sendMessage") == [] and spy.asked == []
