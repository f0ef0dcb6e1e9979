"""Feishu events to questions: who is asking, in which chat, with which words.

Pure parsing, no SDK and no network: `adapters.feishu.inbound` on event payloads
shaped as Feishu delivers them (`testkit.fakes.feishu.message_event`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapters.feishu.inbound import (
    NONCE_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    bot_mention_keys,
    question_from_event,
    sdk_headers,
)
from adapters.webhooks import is_fresh
from bot.chat.grammar import parse_command
from testkit.fakes.feishu import bot_mention, message_event

BOT = "ou_fake_bot"


def other(key: str = "@_user_2", open_id: str = "ou_bob", name: str = "Bob") -> dict[str, Any]:
    return {"key": key, "id": {"open_id": open_id}, "name": name, "tenant_key": "t"}


def test_a_group_mention_becomes_the_text_without_the_bot() -> None:
    event = message_event("@_user_1 #7035 有什么风险", token="t", mentions=[bot_mention()],
                          event_id="ev-1")
    message = question_from_event(event, BOT)
    assert message is not None
    assert (message.delivery_key, message.reply_to, message.channel_id, message.user_id) == (
        "ev-1", "om_question_1", "oc_0123456789abcdef", "ou_alice")
    assert message.text == "#7035 有什么风险"
    assert message.channel_key == "feishu:oc_0123456789abcdef"
    assert message.raw == event
    command = parse_command(message.text)
    assert (command.kind, command.pull, command.lang) == ("risks", 7035, "zh")


def test_a_group_message_that_does_not_mention_the_bot_is_not_answered() -> None:
    event = message_event("@_user_2 digest", token="t", mentions=[other()])
    assert question_from_event(event, BOT) is None
    assert question_from_event(message_event("digest", token="t"), BOT) is None


def test_a_direct_message_needs_no_mention() -> None:
    message = question_from_event(message_event("summary #6974", token="t", chat_type="p2p"), BOT)
    assert message is not None and message.text == "summary #6974"


def test_only_the_bots_own_mention_keys_are_taken_out() -> None:
    # @_user_1 is the bot, @_user_10 someone else: the shorter key must not eat the longer.
    event = message_event("@_user_10 @_user_1 digest", token="t",
                          mentions=[bot_mention(), other("@_user_10")])
    message = question_from_event(event, BOT)
    assert message is not None and message.text == "@_user_10 digest"
    assert parse_command(message.text).kind == "digest"


def test_without_the_bots_identity_every_mention_may_be_the_bot() -> None:
    mentions = [bot_mention(open_id="ou_unknown"), other()]
    assert bot_mention_keys(mentions, None) == {"@_user_1", "@_user_2"}
    marked = [{**bot_mention(), "mentioned_type": "bot"}, {**other(), "mentioned_type": "user"}]
    assert bot_mention_keys(marked, None) == {"@_user_1"}
    assert bot_mention_keys(mentions, "ou_unknown") == {"@_user_1"}


def test_messages_from_apps_are_ignored() -> None:
    event = message_event("@_user_1 digest", token="t", mentions=[bot_mention()],
                          sender_type="app")
    assert question_from_event(event, BOT) is None


def test_rich_text_messages_are_read() -> None:
    content = {"title": "", "content": [[
        {"tag": "at", "user_id": "@_user_1", "user_name": "prdigest"},
        {"tag": "text", "text": " subscribe "},
        {"tag": "text", "text": "npu", "style": ["bold"]},
    ]]}
    event = message_event("", token="t", mentions=[bot_mention()], message_type="post",
                          content=content)
    message = question_from_event(event, BOT)
    assert message is not None and message.text == "subscribe npu"


@pytest.mark.parametrize(
    ("message_type", "content"),
    [("image", {"image_key": "img_1"}), ("sticker", {"file_key": "f"}), ("text", None)],
)
def test_other_messages_give_empty_text_so_the_user_gets_help(
        message_type: str, content: dict[str, Any] | None) -> None:
    event = message_event("", token="t", chat_type="p2p", message_type=message_type,
                          content=content)
    if content is None:
        event["event"]["message"]["content"] = "not json"
    message = question_from_event(event, BOT)
    assert message is not None and message.text == ""
    assert parse_command(message.text).kind == "help"


@pytest.mark.parametrize(
    "broken",
    [{}, {"header": {}, "event": {}}, {"header": {"event_type": "im.message.receive_v1"}},
     {"header": {"event_type": "im.chat.updated_v1", "event_id": "e"}, "event": {}}],
)
def test_other_or_broken_payloads_are_not_questions(broken: dict[str, Any]) -> None:
    assert question_from_event(broken, BOT) is None


def test_the_sdk_gets_its_headers_under_the_names_it_looks_up() -> None:
    lowered = {"x-lark-request-timestamp": "1", "x-lark-request-nonce": "n",
               "x-lark-signature": "s", "content-type": "application/json"}
    assert sdk_headers(lowered) == {TIMESTAMP_HEADER: "1", NONCE_HEADER: "n",
                                    SIGNATURE_HEADER: "s"}


@pytest.mark.parametrize(
    ("timestamp", "fresh"),
    [(None, True), ("1000", True), ("1299", True), ("701", True), ("1301", False),
     ("699", False), ("soon", False), ("nan", False), ("inf", False), (" 1000 ", True)],
)
def test_a_signed_timestamp_must_be_recent(timestamp: str | None, fresh: bool) -> None:
    assert is_fresh(timestamp, now=1000.0, window_seconds=300) is fresh


def test_the_event_factory_matches_the_documented_shape() -> None:
    event = message_event("hi", token="tok")
    assert event["schema"] == "2.0" and event["header"]["token"] == "tok"
    assert json.loads(event["event"]["message"]["content"]) == {"text": "hi"}
