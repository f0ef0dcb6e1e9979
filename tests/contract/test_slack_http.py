"""Slack over HTTP: the real Bolt app and slack_sdk client against the fake Slack.

Inbound requests carry real v0 signatures (slack_sdk's `SignatureVerifier`); answers are
read back from what the fake Slack received, blocks and escaping included.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any
from urllib.parse import urlencode

import pytest

from adapters.slack.adapter import EVENTS_PATH
from bot.config import Config
from bot.snapshot import read_snapshot
from bot.store.claims import Claims
from bot.store.coordination import Coordination
from testkit import EXAMPLES
from testkit.coordination import claims_on
from testkit.fakes.slack import BOT_TOKEN, FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads, signed_headers
from testkit.slack_checks import assert_valid
from testkit.slack_http import (
    CHANNEL,
    FORM,
    JSON,
    RecordingHandler,
    http_client,
    make_adapter,
    post_signed,
    real_handler,
    shown,
    slash,
)

# --- slash commands ----------------------------------------------------------------------


async def test_a_slash_command_is_acknowledged_then_answered_on_its_response_url(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, real_handler(config), deduper, fake_slack)
    async with http_client(adapter) as client:
        response = await post_signed(client, slash(SlackPayloads(), fake_slack,
                                                   "risks for #1201"), FORM)
        assert response.status_code == 200
        assert response.text == ""  # the answer follows on the response_url
        await adapter.drain()
    [answer] = fake_slack.posted("response")
    assert_valid(answer)
    assert answer["response_type"] == "in_channel"
    assert answer["unfurl_links"] is False
    text = shown(answer)
    assert "#1201" in text and "kv_cache.py" in text
    assert re.search(r"[\u4e00-\u9fff]", text) is None  # asked in English, answered so
    [actions] = [b for b in answer["blocks"] if b["type"] == "actions"]
    assert actions["elements"][0]["url"] == "https://github.com/acme/lumen/pull/1201"
    assert fake_slack.calls("chat.postMessage") == []


async def test_the_digest_asked_in_chinese_comes_back_whole_and_escaped(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, real_handler(config), deduper, fake_slack)
    async with http_client(adapter) as client:
        await post_signed(client, slash(SlackPayloads(), fake_slack, "上周周报"), FORM)
        await adapter.drain()
    answers = fake_slack.posted("response")
    assert answers
    for answer in answers:
        assert_valid(answer)
    text = "\n".join(shown(a) for a in answers)
    assert "acme/lumen 2026 年第 29 周周报" in text
    assert "<!channel>" not in json.dumps(answers)
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    numbers = {int(n) for n in re.findall(r"#(\d+)", text)}
    assert numbers and numbers <= {p.number for p in snapshot.pulls}


async def test_the_ack_does_not_wait_for_a_slow_answer(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    gate = asyncio.Event()
    handler = RecordingHandler(gate=gate)
    adapter = make_adapter(config, handler, deduper, fake_slack)
    async with http_client(adapter) as client:
        # The answer is held until the gate opens: an ack that waited for it never comes
        # (the limit only bounds that hang; how fast acks are is the benchmarks' to say).
        response = await asyncio.wait_for(
            post_signed(client, slash(SlackPayloads(), fake_slack, "digest"), FORM), 30)
        assert response.status_code == 200
        assert fake_slack.calls("response") == []  # still thinking
        gate.set()
        await adapter.drain()
    assert len(fake_slack.posted("response")) == 1


async def test_a_question_outside_the_grammar_gets_help_in_the_askers_language(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, real_handler(config), deduper, fake_slack)
    async with http_client(adapter) as client:
        await post_signed(client, slash(SlackPayloads(), fake_slack, "今天天气 <!here>"), FORM)
        await adapter.drain()
    [answer] = fake_slack.posted("response")
    assert answer["response_type"] == "ephemeral"
    text = shown(answer)
    assert "/prdigest" in text and re.search(r"[\u4e00-\u9fff]", text)
    assert "<!here>" not in text and "&lt;!here&gt;" in text


async def test_a_channel_outside_the_config_is_refused_politely(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, real_handler(config), deduper, fake_slack)
    async with http_client(adapter) as client:
        await post_signed(client, slash(SlackPayloads(), fake_slack, "digest",
                                        channel_id="C0OTHER01"), FORM)
        await adapter.drain()
    [answer] = fake_slack.posted("response")
    assert answer["response_type"] == "ephemeral"
    assert "config" in shown(answer)
    assert "2026" not in shown(answer)  # no data for a stranger


async def test_a_failing_handler_still_gets_the_user_an_answer_without_a_traceback(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    caplog: pytest.LogCaptureFixture
) -> None:
    adapter = make_adapter(config, RecordingHandler(fail=True), deduper, fake_slack)
    async with http_client(adapter) as client:
        await post_signed(client, slash(SlackPayloads(), fake_slack, "digest"), FORM)
        await adapter.drain()
    [answer] = fake_slack.posted("response")
    assert "went wrong" in shown(answer)
    assert "Traceback" not in json.dumps(answer) and "RuntimeError" not in json.dumps(answer)
    assert "handler broke" in caplog.text  # the log keeps it


# --- signatures ----------------------------------------------------------------------------


# Timestamps are offsets from the moment of sending (computed then, not at import).
BAD_SIGNATURES: dict[str, dict[str, Any]] = {
    "another secret": {"secret": "not-the-signing-secret"},
    "stale by 301 s": {"offset": -301},
    "from the future by 301 s": {"offset": 301},
}


@pytest.mark.parametrize("case", [*BAD_SIGNATURES, "missing headers", "tampered body"])
async def test_a_bad_or_stale_signature_gets_401_and_causes_nothing(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, case: str
) -> None:
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    body = slash(SlackPayloads(), fake_slack, "digest")
    async with http_client(adapter) as client:
        if case == "missing headers":
            response = await client.post(EVENTS_PATH, content=body,
                                         headers={"Content-Type": FORM})
        elif case == "tampered body":
            headers = signed_headers(body)
            response = await client.post(EVENTS_PATH, content=body.replace("digest", "topics"),
                                         headers=headers)
        else:
            sign = dict(BAD_SIGNATURES[case])
            if "offset" in sign:
                sign["timestamp"] = int(time.time()) + sign.pop("offset")
            response = await post_signed(client, body, FORM, **sign)
        await adapter.drain()
    assert response.status_code == 401
    assert handler.asked == []
    assert fake_slack.requests == []


async def test_a_signed_body_nobody_can_read_gets_400_and_an_unsigned_one_401(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    async with http_client(adapter) as client:
        garbage = '{"type": "event_callback", "event": '
        assert (await post_signed(client, garbage, JSON)).status_code == 400
        unsigned = await client.post(EVENTS_PATH, content=garbage,
                                     headers={"Content-Type": JSON})
        assert unsigned.status_code == 401
        big = "x" * (2 << 20)
        assert (await post_signed(client, big, FORM)).status_code == 413
        big_unsigned = await client.post(EVENTS_PATH, content=big, headers={"Content-Type": FORM})
        assert big_unsigned.status_code == 401
        await adapter.drain()
    assert handler.asked == []


ODD_BODIES = {
    "a JSON list": ("[1, 2]", JSON),
    "an event that is a string": ('{"type": "event_callback", "event": "x"}', JSON),
    "an event without a channel": (
        '{"type": "event_callback", "event_id": "Ev1", "event": {"type": "app_mention"}}', JSON),
    "a numeric event id": ('{"type": "event_callback", "event_id": 5, "event": {}}', JSON),
    "an unknown event": ('{"type": "event_callback", "event_id": "Ev2", '
                         '"event": {"type": "reaction_added"}}', JSON),
    "an interaction that is not JSON": ("payload=%7Bnot-json", FORM),
    "a command without a channel": ("command=%2Fprdigest&text=digest", FORM),
    "another command": ("command=%2Fother&text=digest&channel_id=C0123456", FORM),
    "empty": ("", FORM),
}


@pytest.mark.parametrize("case", ODD_BODIES)
async def test_odd_signed_payloads_get_a_calm_answer_and_no_reply(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, case: str
) -> None:
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    body, content_type = ODD_BODIES[case]
    raw = body.encode()
    async with http_client(adapter) as client:
        headers = signed_headers(raw, content_type=content_type)
        response = await client.post(EVENTS_PATH, content=raw, headers=headers)
        await adapter.drain()
    assert response.status_code < 500
    assert handler.asked == []
    assert fake_slack.posted() == [] and fake_slack.posted("response") == []


async def test_bytes_that_are_not_utf8_get_401(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    """Slack signs UTF-8 text; slack_sdk's verifier cannot even read other bytes."""
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    headers = signed_headers(b"text=ok", content_type=FORM)
    async with http_client(adapter) as client:
        response = await client.post(EVENTS_PATH, content=b"text=\xff\xfe", headers=headers)
    assert response.status_code == 401
    assert handler.asked == []


async def test_url_verification_is_answered_once_signed(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, RecordingHandler(), deduper, fake_slack)
    body = json.dumps({"token": "t", "challenge": "c-123", "type": "url_verification"})
    async with http_client(adapter) as client:
        response = await post_signed(client, body, JSON)
        assert response.status_code == 200
        assert response.json() == {"challenge": "c-123"}
        unsigned = await client.post(EVENTS_PATH, content=body, headers={"Content-Type": JSON})
        assert unsigned.status_code == 401


# --- events: mentions and direct messages ---------------------------------------------------


async def test_a_mention_is_answered_in_its_thread(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    payloads = SlackPayloads()
    event = payloads.app_mention("<@UBOT0001> subscribe npu", ts="1700000100.000100")
    async with http_client(adapter) as client:
        response = await post_signed(client, json.dumps(payloads.event_callback(event)), JSON)
        assert response.status_code == 200
        await adapter.drain()
    [post] = fake_slack.posted()
    assert post["channel"] == CHANNEL
    assert post["thread_ts"] == "1700000100.000100"
    assert_valid(post)
    [(command, channel, user)] = handler.asked
    assert command.kind == "subscribe" and command.topics == ("npu",)
    assert channel is not None and channel.key == f"slack:{CHANNEL}"
    assert user == "U0USER01"
    auth = fake_slack.calls("chat.postMessage")[0].headers["authorization"]
    assert auth == f"Bearer {BOT_TOKEN}"


async def test_a_direct_message_is_answered_in_the_direct_conversation(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, real_handler(config), deduper, fake_slack)
    payloads = SlackPayloads()
    event = payloads.direct_message("help")
    async with http_client(adapter) as client:
        await post_signed(client, json.dumps(payloads.event_callback(event)), JSON)
        await adapter.drain()
    [post] = fake_slack.posted()
    assert post["channel"] == "D0DIRECT1"
    assert "thread_ts" not in post or post["thread_ts"] is None
    assert "/prdigest" in shown(post)


IGNORED_EVENTS = {
    "the bot's own message": {"user": "UBOT0001"},
    "another bot's message": {"bot_id": "B0OTHER01", "subtype": "bot_message"},
    "an edit": {"subtype": "message_changed"},
    "a deletion": {"subtype": "message_deleted", "hidden": True},
    "a bot's file share": {"subtype": "file_share", "bot_id": "B0OTHER01"},
    "a message in a channel": {"channel_type": "channel", "channel": CHANNEL},
}


@pytest.mark.parametrize("case", IGNORED_EVENTS)
async def test_messages_that_are_not_questions_get_no_answer(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, case: str
) -> None:
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    payloads = SlackPayloads()
    event = payloads.direct_message("digest", **IGNORED_EVENTS[case])
    async with http_client(adapter) as client:
        response = await post_signed(client, json.dumps(payloads.event_callback(event)), JSON)
        assert response.status_code == 200
        await adapter.drain()
    assert handler.asked == []
    assert fake_slack.calls("chat.postMessage") == []


async def test_a_click_on_a_link_button_is_acknowledged(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    payload = {
        "type": "block_actions", "team": {"id": "T0TEAM01"}, "user": {"id": "U0USER01"},
        "api_app_id": "A0FAKE01", "token": "t", "trigger_id": "1.2.3",
        "channel": {"id": CHANNEL}, "container": {"type": "message"},
        "actions": [{"type": "button", "action_id": "prdigest.open-pull-1201",
                     "block_id": "b1", "action_ts": "1700000000.1",
                     "url": "https://github.com/acme/lumen/pull/1201"}],
    }
    async with http_client(adapter) as client:
        response = await post_signed(client, urlencode({"payload": json.dumps(payload)}), FORM)
        await adapter.drain()
    assert response.status_code == 200
    assert handler.asked == []


# --- retries: one question, one answer -----------------------------------------------------


async def test_a_retried_event_is_answered_once_even_on_another_replica(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    port: Coordination
) -> None:
    handler = RecordingHandler()
    first = make_adapter(config, handler, deduper, fake_slack)
    second = make_adapter(config, handler, claims_on(port), fake_slack)  # the same store
    payloads = SlackPayloads()
    body = json.dumps(payloads.event_callback(payloads.app_mention("<@UBOT0001> digest")))
    async with http_client(first) as one, http_client(second) as two:
        assert (await post_signed(one, body, JSON)).status_code == 200
        await first.drain()  # answered before Slack retries (test_retry_later: while)
        for attempt, client in ((1, two), (2, one)):
            headers = signed_headers(body, content_type=JSON)
            headers |= {"X-Slack-Retry-Num": str(attempt),
                        "X-Slack-Retry-Reason": "http_timeout"}
            retry = await client.post(EVENTS_PATH, content=body, headers=headers)
            assert retry.status_code == 200
        await first.drain()
        await second.drain()
    assert len(handler.asked) == 1
    assert len(fake_slack.posted()) == 1


async def test_a_new_event_with_a_retry_header_is_still_answered(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    """The first delivery may never have arrived; the retry is then the only one."""
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    payloads = SlackPayloads()
    body = json.dumps(payloads.event_callback(payloads.app_mention("<@UBOT0001> digest")))
    async with http_client(adapter) as client:
        headers = signed_headers(body, content_type=JSON) | {"X-Slack-Retry-Num": "1"}
        assert (await client.post(EVENTS_PATH, content=body, headers=headers)).status_code == 200
        await adapter.drain()
    assert len(fake_slack.posted()) == 1
