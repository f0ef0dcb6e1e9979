"""The Telegram adapter with the real python-telegram-bot against the fake Bot API.

Every assertion is about what Telegram received: the form fields of `sendMessage`
(HTML text, parse mode, keyboard JSON), the webhook registration, and what did not
arrive when a request was refused or a delivery was a repeat.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from adapters.base import DeliveryError
from adapters.telegram import adapter as telegram_adapter
from adapters.telegram import settings as telegram_settings
from adapters.telegram.adapter import WEBHOOK_PATH, TelegramAdapter
from bot.config import RepoConfig, TopicRule
from bot.engine import build_digest
from bot.errors import ConfigError
from bot.models import Digest, KeyPull, Reply
from bot.render import render_digest
from bot.render import telegram as telegram_render
from bot.render.chat import CHAT_CEILING, chat_view
from bot.render.telegram import TelegramMessage, render_digest_html, render_digest_messages
from bot.snapshot import read_snapshot
from bot.store.claims import Claims
from testkit.fakes.telegram import (
    FakeTelegram,
    anonymous_admin,
    group_chat,
    message_update,
    parse_html,
    private_chat,
    user,
    utf16_length,
)
from testkit.telegram_bot import (
    CONFIG,
    GROUP,
    PRIVATE,
    SECRET,
    SNAPSHOT,
    WEEK,
    SpyHandler,
    post_update,
    running,
    wait_sent,
)


async def settle() -> None:
    """Time for anything queued to have reached the fake, had it been sent."""
    await asyncio.sleep(0.3)


def plain_of(html_text: str) -> str:
    return parse_html(html_text)[0]


SMALL_MESSAGES = 1500  # a message limit under which the example digest takes two


@pytest.fixture
def small_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Telegram's limit lowered so that the example digest takes two messages: how a
    digest in several parts is delivered, whatever the chat budget keeps it to."""
    def small(weekly: Digest, *, limit: int = SMALL_MESSAGES) -> list[TelegramMessage]:
        return render_digest_messages(weekly, limit=min(limit, SMALL_MESSAGES))

    monkeypatch.setattr(telegram_adapter, "render_digest_messages", small)
    monkeypatch.setattr(telegram_render, "render_digest_messages", small)


def digest(lang: str = "en") -> Digest:
    return build_digest(SNAPSHOT, WEEK, repo_config=CONFIG.repo("acme/lumen"),
                        lang=lang)  # type: ignore[arg-type]


# --- the weekly digest ------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_example_digest_arrives_whole_in_one_message_within_the_chat_budget(
    tg: FakeTelegram, redis_url: str, lang: str
) -> None:
    weekly = msgspec.structs.replace(digest(lang), report_url="https://reports.example/w29")
    async with running(tg, redis_url, start=False) as (adapter, _):
        ids = await adapter.post_digest(str(GROUP), weekly)
    sent = tg.sent()
    assert len(sent) == len(ids) == len(tg.calls("sendMessage")) == 1
    fields = sent[0]
    assert fields["chat_id"] == str(GROUP)
    assert fields["parse_mode"] == "HTML"
    assert json.loads(fields["link_preview_options"]) == {"is_disabled": True}
    text, _ = parse_html(fields["text"])  # raises on anything Telegram would refuse
    # The chat form: within the chat budget (not Telegram's 4096), the report link on top.
    assert 0 < utf16_length(text) <= CHAT_CEILING
    assert "https://reports.example/w29" in "\n".join(text.splitlines()[:3])
    assert text.split() == plain_of(render_digest_html(weekly)).split()
    # Every PR it names exists and is in the full report, which holds the rest.
    numbers = {int(n) for n in re.findall(r"#(\d+)", text)}
    assert numbers <= {pull.number for pull in SNAPSHOT.pulls}
    report = render_digest(weekly, "markdown")
    assert numbers <= {int(n) for n in re.findall(r"#(\d+)", report)}
    assert {p.number for p in weekly.pulls} <= {int(n) for n in re.findall(r"#(\d+)", report)}
    quick = chat_view(weekly).quick
    assert quick and {k.number for k in quick} <= numbers
    # The key PRs of the quick view are buttons under the message, then the report.
    keyboard = json.loads(fields["reply_markup"])["inline_keyboard"]
    buttons = [b for row in keyboard for b in row]
    assert [b["url"] for b in buttons] == [
        *(f"https://github.com/acme/lumen/pull/{k.number}" for k in quick),
        "https://reports.example/w29"]


async def test_a_digest_in_several_messages_keeps_every_word_once(
    tg: FakeTelegram, redis_url: str, small_messages: None
) -> None:
    weekly = digest("en")
    async with running(tg, redis_url, start=False) as (adapter, _):
        await adapter.post_digest(str(GROUP), weekly)
    sent = tg.sent()
    assert len(sent) == 2
    for fields in sent:
        assert 0 < utf16_length(plain_of(fields["text"])) <= SMALL_MESSAGES
    whole = plain_of(render_digest_html(weekly))
    assert " ".join(plain_of(f["text"]) for f in sent).split() == whole.split()
    assert "reply_markup" in sent[-1] and "reply_markup" not in sent[0]


async def test_a_hostile_title_reaches_telegram_inert(tg: FakeTelegram, redis_url: str) -> None:
    weekly = digest("en")
    hostile = KeyPull(
        number=1201, url="https://github.com/acme/lumen/pull/1201", type="feat",
        title='<!channel> @all <at user_id="all"></at> <b>x</b> [a](javascript:alert(1))',
        short_title='<!here> @all <at user_id="all"></at> <script>x</script>\x07 & co',
        summary="Fixes a < b && c > d; see [docs](tg://user?id=1) @channel\u202e",
    )
    weekly = msgspec.structs.replace(weekly, key_pulls=(hostile, *weekly.key_pulls[1:]))
    async with running(tg, redis_url, start=False) as (adapter, _):
        await adapter.post_digest(str(GROUP), weekly)
    texts = [f["text"] for f in tg.sent()]
    line = ("• <b>#1201 &lt;!here&gt; @\u2060all &lt;at user_id=\"all\"&gt;&lt;/at&gt; "
            "&lt;script&gt;x&lt;/script&gt; &amp; co</b>: Fixes a &lt; b &amp;&amp; c &gt; d; "
            "see [docs](tg://user?id=1) @\u2060channel")
    assert any(line in text for text in texts)
    plain = " ".join(plain_of(text) for text in texts)
    assert not re.search(r"@(all|here|channel)\b", plain)  # no mention Telegram could detect
    assert "\x07" not in plain and "\u202e" not in plain
    targets = re.findall(r'href="([^"]*)"', " ".join(texts))
    assert targets and all(t.startswith("https://github.com/acme/lumen/") for t in targets)


@pytest.mark.realdata
async def test_a_week_of_real_prs_arrives_in_one_message_within_the_chat_budget(
    tg: FakeTelegram, redis_url: str, shared_data: Path
) -> None:
    for name in ("verl-2026-07.json", "vllm-2026-W29.json"):
        snapshot = read_snapshot(shared_data / name)
        config = RepoConfig(timezone="Asia/Shanghai",
                            topics={"npu": TopicRule(keywords=("npu", "ascend"))})
        weekly = build_digest(snapshot, "2026-W29", repo_config=config, lang="zh")
        before = len(tg.sent())
        async with running(tg, redis_url, start=False) as (adapter, _):
            await adapter.post_digest(str(GROUP), weekly)
        sent = tg.sent()[before:]
        assert len(sent) == 1
        posted = plain_of(sent[0]["text"])
        assert utf16_length(posted) <= CHAT_CEILING
        assert sent[0]["text"].startswith("<b>")
        numbers = {int(n) for n in re.findall(r"#(\d+)", posted)}
        assert numbers <= {p.number for p in snapshot.pulls}
        assert numbers <= {int(n) for n in re.findall(r"#(\d+)",
                                                    render_digest(weekly, "markdown"))}


# --- the webhook --------------------------------------------------------------------------


async def test_a_question_in_the_group_gets_its_answer(tg: FakeTelegram, redis_url: str) -> None:
    spy = SpyHandler()
    async with running(tg, redis_url, handler=spy) as (_, http):
        update = message_update(10, "/risks@prdigest_bot 1201", chat=group_chat(GROUP),
                                message_id=77)
        response = await post_update(http, update)
        assert response.status_code == 200
        [fields] = await wait_sent(tg)
    assert fields["chat_id"] == str(GROUP)
    assert fields["parse_mode"] == "HTML"
    assert json.loads(fields["reply_parameters"]) == {
        "message_id": 77, "allow_sending_without_reply": True}
    assert json.loads(fields["reply_markup"]) == {"inline_keyboard": [[
        {"text": "Open #1201 on GitHub", "url": "https://github.com/acme/lumen/pull/1201"}]]}
    assert fields["text"].startswith(
        '<b><a href="https://github.com/acme/lumen/pull/1201">#1201</a> [rollout, npu] feat: '
        "paged KV cache for the Ascend rollout engine (merged)</b>\n")
    assert "• [high] Critical finding by gemini-code-assist[bot]" in fields["text"]
    [(command, channel, user_id)] = spy.asked
    assert (command.kind, command.pull, command.lang) == ("risks", 1201, "en")
    assert channel is not None and channel.key == f"telegram:{GROUP}"
    assert user_id == "4242"


async def test_a_digest_asked_in_the_group_comes_in_several_messages(
    tg: FakeTelegram, redis_url: str, small_messages: None
) -> None:
    async with running(tg, redis_url) as (_, http):
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
    tg: FakeTelegram, redis_url: str
) -> None:
    async with running(tg, redis_url) as (_, http):
        update = message_update(11, "#99999 有什么风险", chat=private_chat(PRIVATE))
        assert (await post_update(http, update)).status_code == 200
        [fields] = await wait_sent(tg)
    assert fields == {
        "chat_id": str(PRIVATE),
        "text": "<code>acme/lumen</code> 没有 PR #99999，或者它不在我已有的数据中。",
        "parse_mode": "HTML",
        "link_preview_options": '{"is_disabled": true}',
    }


@pytest.mark.parametrize(
    ("text", "language_code", "expected"),
    [
        ("what's up?", "en", "Sorry, I did not understand “what's up?”."),
        ("随便聊聊", "en", "“随便聊聊”"),
        ("/help", "zh-hans", "/risks 7035 — 查看某个 PR 的风险观察"),  # the chat's language
        ("/start", "en", "/risks 7035 — 查看某个 PR 的风险观察"),
    ],
)
async def test_text_outside_the_grammar_gets_help_in_the_users_language(
    tg: FakeTelegram, redis_url: str, text: str, language_code: str, expected: str
) -> None:
    async with running(tg, redis_url) as (_, http):
        update = message_update(12, text, chat=private_chat(PRIVATE),
                                sender=user(language_code=language_code))
        await post_update(http, update)
        [fields] = await wait_sent(tg)
    assert expected in fields["text"]
    assert "/subscribe npu" in fields["text"]


async def test_an_unconfigured_private_chat_gets_help_in_the_users_telegram_language(
    tg: FakeTelegram, redis_url: str
) -> None:
    async with running(tg, redis_url) as (_, http):
        update = message_update(13, "/help", chat=private_chat(99),
                                sender=user(99, language_code="zh-hans"))
        await post_update(http, update)
        [fields] = await wait_sent(tg)
    assert fields["chat_id"] == "99"
    assert "/risks 7035 — 查看某个 PR 的风险观察" in fields["text"]


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
    tg: FakeTelegram, redis_url: str, text: str, reply_to_bot: bool, answered: bool
) -> None:
    bot_message = {"message_id": 5, "date": 0, "chat": group_chat(GROUP), "text": "earlier",
                   "from": {"id": tg.bot_id, "is_bot": True, "first_name": "prdigest",
                            "username": tg.username}}
    spy = SpyHandler()
    async with running(tg, redis_url, handler=spy) as (_, http):
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
    tg: FakeTelegram, redis_url: str
) -> None:
    async with running(tg, redis_url) as (_, http):
        await post_update(http, message_update(15, "/frobnicate@prdigest_bot",
                                               chat=group_chat(GROUP)))
        [fields] = await wait_sent(tg)
    # The echo is inert too: a word joiner keeps it from being a mention.
    assert "Sorry, I did not understand “/frobnicate@\u2060prdigest_bot”." in fields["text"]


async def test_a_question_in_a_forum_topic_is_answered_in_that_topic(
    tg: FakeTelegram, redis_url: str
) -> None:
    async with running(tg, redis_url) as (_, http):
        await post_update(http, message_update(16, "/topics", chat=group_chat(GROUP),
                                               thread_id=321))
        [fields] = await wait_sent(tg)
    assert fields["message_thread_id"] == "321"
    assert fields["text"].startswith("This chat follows <code>trainer</code>.")


async def test_a_failing_handler_still_gets_the_user_an_answer(
    tg: FakeTelegram, redis_url: str
) -> None:
    async with running(tg, redis_url, handler=SpyHandler(fail=True)) as (_, http):
        await post_update(http, message_update(17, "/summary 1202", chat=group_chat(GROUP)))
        [fields] = await wait_sent(tg)
    assert fields["text"] == (
        "Something went wrong on my side; it has been logged. Please try again.")
    assert "boom" not in fields["text"] and "Traceback" not in fields["text"]


@pytest.mark.parametrize("secret", [None, "", "wrong", SECRET + "x", SECRET[:-1]])
async def test_a_wrong_or_missing_secret_token_is_refused_and_causes_nothing(
    tg: FakeTelegram, redis_url: str, secret: str | None
) -> None:
    spy = SpyHandler()
    async with running(tg, redis_url, handler=spy) as (_, http):
        response = await post_update(http, message_update(18, "/help"), secret=secret)
        assert response.status_code == 401
        await settle()
    assert tg.calls("sendMessage") == [] and spy.asked == []
    # The refused update was not marked seen: the genuine delivery is still answered.
    async with running(tg, redis_url) as (_, http):
        await post_update(http, message_update(18, "/help"))
        await wait_sent(tg)


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b"[1, 2]", b'"update"', b"{}", b'{"update_id": "5"}',
     b'{"update_id": true}', b'{"update_id": 19, "message": "hello"}',
     b'{"update_id": 19, "message": {"message_id": "x"}}', b"\xff\xfe"],
)
async def test_bad_updates_get_a_4xx_and_cause_nothing(
    tg: FakeTelegram, redis_url: str, body: bytes
) -> None:
    async with running(tg, redis_url) as (_, http):
        response = await post_update(http, body)
        assert 400 <= response.status_code < 500
        await settle()
    assert tg.calls("sendMessage") == []


async def test_a_too_large_body_is_refused(tg: FakeTelegram, redis_url: str) -> None:
    async with running(tg, redis_url) as (_, http):
        response = await post_update(http, b"{" + b" " * (1 << 21) + b"}")
    assert response.status_code == 413


async def test_a_redelivered_update_is_answered_once(tg: FakeTelegram, redis_url: str) -> None:
    update = message_update(20, "/summary 1202", chat=group_chat(GROUP))
    async with running(tg, redis_url) as (_, http):
        statuses = [(await post_update(http, update)).status_code for _ in range(3)]
        await wait_sent(tg)
        await settle()
    assert statuses == [200, 200, 200]
    assert len(tg.calls("sendMessage")) == 1


async def test_two_replicas_sharing_redis_answer_an_update_once(
    tg: FakeTelegram, redis_url: str
) -> None:
    update = message_update(21, "/summary 1202", chat=group_chat(GROUP))
    async with running(tg, redis_url) as (_, first), running(tg, redis_url) as (_, second):
        responses = await asyncio.gather(post_update(first, update), post_update(second, update))
        await wait_sent(tg)
        await settle()
    assert [r.status_code for r in responses] == [200, 200]
    assert len(tg.calls("sendMessage")) == 1


async def test_start_registers_the_webhook_and_the_command_menu(
    tg: FakeTelegram, redis_url: str
) -> None:
    url = "https://bot.example.test/telegram/webhook"
    async with running(tg, redis_url, webhook_url=url) as (adapter, _):
        assert adapter.status()["webhook_registered"] is True
        await adapter.start()  # idempotent
    [registration] = tg.calls("setWebhook")
    assert registration.fields["url"] == url
    assert registration.fields["secret_token"] == SECRET
    assert json.loads(registration.fields["allowed_updates"]) == ["message"]
    menus = tg.calls("setMyCommands")
    assert [m.fields.get("language_code") for m in menus] == [None, "zh"]
    assert [c["command"] for c in menus[0].json_field("commands")] == [
        "risks", "summary", "digest", "topics", "subscribe", "unsubscribe", "help"]
    assert menus[1].json_field("commands")[0]["description"] == "查看某个 PR 的风险观察"


# --- long polling -------------------------------------------------------------------------


async def test_long_polling_answers_what_get_updates_brings(
    tg: FakeTelegram, redis_url: str
) -> None:
    async with running(tg, redis_url, polling=True, secret_token=None,
                       poll_timeout=1) as (adapter, _):
        assert adapter.routes() == []
        assert adapter.status()["mode"] == "polling"
        tg.push_update(message_update(30, "summary #1202", chat=private_chat(PRIVATE)))
        [fields] = await wait_sent(tg)
    assert fields["chat_id"] == str(PRIVATE)
    assert "grad norm explodes when micro-batches are empty" in fields["text"]
    assert tg.calls("deleteWebhook")  # polling and a webhook exclude each other
    polls = tg.calls("getUpdates")
    assert json.loads(polls[0].fields["allowed_updates"]) == ["message"]
    assert any(p.fields.get("offset") == "31" for p in polls)  # the update was confirmed


# --- delivery errors ----------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
@pytest.mark.parametrize("timedelta_env", [True, False])
async def test_flood_control_is_waited_out_and_the_message_delivered(
    tg: FakeTelegram, redis_url: str, monkeypatch: pytest.MonkeyPatch, timedelta_env: bool
) -> None:
    """`retry_after` is a timedelta with PTB_TIMEDELTA=true and seconds without it."""
    if timedelta_env:
        monkeypatch.setenv("PTB_TIMEDELTA", "true")
    else:
        monkeypatch.delenv("PTB_TIMEDELTA", raising=False)
    tg.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    async with running(tg, redis_url, start=False) as (adapter, _):
        ids = await adapter.send_reply(str(GROUP), Reply(kind="help", lang="en"))
    calls = tg.calls("sendMessage")
    assert [c.status for c in calls] == [429, 200]
    assert calls[0].fields == calls[1].fields
    assert len(ids) == 1


ERRORS = [
    pytest.param(400, "Bad Request: chat not found", {}, 1, "Chat not found", id="400"),
    pytest.param(403, "Forbidden: bot was kicked from the supergroup chat", {}, 1,
                 "bot was kicked", id="403"),
    pytest.param(429, "Too Many Requests: retry after 1", {"retry_after": 1, "times": 3}, 3,
                 "Flood control exceeded", id="429-retries-exhausted"),
    pytest.param(429, "Too Many Requests: retry after 3600", {"retry_after": 3600}, 1,
                 "Flood control exceeded", id="429-wait-too-long"),
    pytest.param(500, "Internal Server Error", {}, 1, "Internal Server Error", id="500"),
    pytest.param(502, "Bad Gateway", {}, 1, "Bad Gateway", id="502"),
]


@pytest.mark.parametrize(("status", "description", "options", "attempts", "reason"), ERRORS)
async def test_a_refused_digest_raises_delivery_error_without_secrets(
    tg: FakeTelegram, redis_url: str, status: int, description: str,
    options: dict[str, Any], attempts: int, reason: str, small_messages: None,
) -> None:
    tg.fail_next("sendMessage", status, description, **options)
    async with running(tg, redis_url, start=False) as (adapter, _):
        with pytest.raises(DeliveryError) as raised:
            await adapter.post_digest(str(GROUP), digest("en"))
    message = str(raised.value)
    assert reason in message
    assert "0 of 2 messages" in message
    assert tg.token not in message and SECRET not in message
    assert len(tg.calls("sendMessage")) == attempts


async def test_a_failure_midway_says_how_much_was_posted(
    tg: FakeTelegram, redis_url: str, small_messages: None
) -> None:
    tg.fail_next("sendMessage", 403, "Forbidden: bot was kicked from the group chat", after=1)
    async with running(tg, redis_url, start=False) as (adapter, _):
        with pytest.raises(DeliveryError, match="1 of 2 messages"):
            await adapter.post_digest(str(GROUP), digest("en"))
    assert [c.status for c in tg.calls("sendMessage")] == [200, 403]


async def test_a_group_that_became_a_supergroup_still_gets_its_digest(
    tg: FakeTelegram, redis_url: str
) -> None:
    tg.fail_next("sendMessage", 400, "Bad Request: group chat was upgraded to a supergroup chat",
                 parameters={"migrate_to_chat_id": -1009999})
    async with running(tg, redis_url, start=False) as (adapter, _):
        ids = await adapter.post_digest("-4001", digest("en"))
    chats = [c.fields["chat_id"] for c in tg.calls("sendMessage")]
    assert chats[0] == "-4001" and set(chats[1:]) == {"-1009999"}
    assert len(ids) == len(chats) - 1


async def test_a_wrong_bot_token_fails_start_without_showing_it(
    tg: FakeTelegram, redis_url: str
) -> None:
    with pytest.raises(DeliveryError) as raised:
        async with running(tg, redis_url, token="999:WRONG-token"):
            pass
    # PTB's own message quotes the token; ours does not.
    assert "999:WRONG-token" not in str(raised.value)
    assert "rejected" in str(raised.value)


async def test_an_unreachable_bot_api_makes_telegram_deliver_again(
    tg: FakeTelegram, redis_url: str
) -> None:
    tg.fail_next("getMe", 502, "Bad Gateway")
    async with running(tg, redis_url, start=False) as (_, http):
        first = await post_update(http, message_update(40, "/help", chat=group_chat(GROUP)))
        second = await post_update(http, message_update(40, "/help", chat=group_chat(GROUP)))
        await wait_sent(tg)
        await settle()
    assert (first.status_code, second.status_code) == (503, 200)
    assert len(tg.calls("sendMessage")) == 1


async def test_request_logs_never_show_the_token(
    tg: FakeTelegram, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        async with running(tg, redis_url, start=False) as (adapter, _):
            await adapter.send_reply(str(GROUP), Reply(kind="help", lang="en"))
    assert any("sendMessage" in record.getMessage() for record in caplog.records)
    assert not any(tg.token in record.getMessage() for record in caplog.records)


# --- configuration -----------------------------------------------------------------------


def test_from_config_needs_its_secrets_in_the_environment(
    monkeypatch: pytest.MonkeyPatch, tg: FakeTelegram
) -> None:
    deduper = Claims(None)
    handler = SpyHandler()
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET", raising=False)
    assert TelegramAdapter.from_config(CONFIG, handler, deduper) is None
    assert telegram_settings.unconfigured_status(CONFIG) == {
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


async def test_an_anonymous_group_admin_is_answered(tg: FakeTelegram, redis_url: str) -> None:
    """An admin posting as the group arrives from `GroupAnonymousBot` (a bot) with the
    group as `sender_chat`: it is a person asking, so it is answered, as the group."""
    spy = SpyHandler()
    group = group_chat(GROUP)
    async with running(tg, redis_url, handler=spy) as (_, http):
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
                                                              redis_url: str) -> None:
    group = group_chat(GROUP)
    channel = {"id": -1009999999999, "type": "channel", "title": "announcements"}
    other_bot = {"id": 5550001, "is_bot": True, "first_name": "Other", "username": "other_bot"}
    spy = SpyHandler()
    async with running(tg, redis_url, handler=spy) as (_, http):
        for update_id, sender, sender_chat in ((61, other_bot, None),
                                               (62, anonymous_admin(), channel)):
            update = message_update(update_id, "/summary@prdigest_bot 1202", chat=group,
                                    sender=sender, sender_chat=sender_chat)
            assert (await post_update(http, update)).status_code == 200
        await settle()
    assert tg.calls("sendMessage") == [] and spy.asked == []
