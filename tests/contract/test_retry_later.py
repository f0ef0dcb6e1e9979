"""A delivery another process began answering - at work, or SIGKILLed a moment ago with
its alive mark not yet lapsed - is answered "send it again later" (a 503 the platform
re-sends after), never acknowledged as a repeat; once that process finished, or its
mark lapsed and the claim is taken over, the platform's next try is answered, once.
(Feishu's webhook: tests/contract/test_feishu_webhook.py.)"""

from __future__ import annotations

import asyncio
import json

from adapters.slack.adapter import EVENTS_PATH
from bot.config import Config
from bot.store.claims import Claims
from bot.store.keys import Keys
from bot.store.memory import MemoryCoordination
from testkit.coordination import claims_on
from testkit.fakes.slack import FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads, signed_headers
from testkit.fakes.telegram import FakeTelegram, group_chat, message_update
from testkit.slack_http import JSON, RecordingHandler, http_client, make_adapter
from testkit.telegram_bot import GROUP, SpyHandler, post_update, running, settle, wait_sent

DEAD_ALIVE_SECONDS = 0.3
"""The alive mark of the process that "dies" here: it lapses within the test."""


async def died_answering(port: MemoryCoordination, platform: str, delivery: str) -> None:
    """Another process began answering `delivery` and was SIGKILLed: its claim stays,
    its alive mark lapses in `DEAD_ALIVE_SECONDS`."""
    dead = claims_on(port, alive_seconds=DEAD_ALIVE_SECONDS)
    assert await dead.begin(Keys.seen(platform, delivery), dead.seen_ttl_seconds)


def slack_retry(body: str, attempt: int) -> dict[str, str]:
    return signed_headers(body, content_type=JSON) | {
        "X-Slack-Retry-Num": str(attempt), "X-Slack-Retry-Reason": "http_timeout"}


async def test_slack_is_asked_again_while_another_replica_answers(
        fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
        port: MemoryCoordination) -> None:
    gate = asyncio.Event()
    handler = RecordingHandler(gate=gate)  # the first replica is still at work
    first = make_adapter(config, handler, deduper, fake_slack)
    second = make_adapter(config, handler, claims_on(port), fake_slack)
    payloads = SlackPayloads()
    body = json.dumps(payloads.event_callback(payloads.app_mention("<@UBOT0001> digest")))
    async with http_client(first) as one, http_client(second) as two:
        acknowledged = await one.post(EVENTS_PATH, content=body,
                                      headers=signed_headers(body, content_type=JSON))
        while not handler.asked:
            await asyncio.sleep(0.01)
        busy = await two.post(EVENTS_PATH, content=body, headers=slack_retry(body, 1))
        same = await one.post(EVENTS_PATH, content=body, headers=slack_retry(body, 2))
        gate.set()
        await first.drain()
        after = await two.post(EVENTS_PATH, content=body, headers=slack_retry(body, 3))
        await second.drain()
    assert acknowledged.status_code == 200
    assert busy.status_code == 503 and "x-slack-no-retry" not in busy.headers
    assert int(busy.headers["retry-after"]) > 0
    assert same.status_code == 200  # the replica answering it: a genuine repeat
    assert after.status_code == 200
    assert len(handler.asked) == 1 and len(fake_slack.posted()) == 1


async def test_slack_retries_after_a_crash_are_answered_once(
        fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
        port: MemoryCoordination) -> None:
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    payloads = SlackPayloads()
    callback = payloads.event_callback(payloads.app_mention("<@UBOT0001> digest"))
    body = json.dumps(callback)
    await died_answering(port, "slack", f"event:{callback['event_id']}")
    async with http_client(adapter) as http:
        early = await http.post(EVENTS_PATH, content=body, headers=slack_retry(body, 1))
        port.clock.advance(DEAD_ALIVE_SECONDS + 0.2)  # the dead process's mark lapses
        late = await http.post(EVENTS_PATH, content=body, headers=slack_retry(body, 2))
        await adapter.drain()
        last = await http.post(EVENTS_PATH, content=body, headers=slack_retry(body, 3))
        await adapter.drain()
    assert [early.status_code, late.status_code, last.status_code] == [503, 200, 200]
    assert len(handler.asked) == 1 and len(fake_slack.posted()) == 1


async def test_telegram_retries_after_a_crash_are_answered_once(
        tg: FakeTelegram, port: MemoryCoordination) -> None:
    update = message_update(77, "/summary 1202", chat=group_chat(GROUP))
    handler = SpyHandler()
    async with running(tg, port, handler=handler) as (adapter, http):
        bot_id = adapter.application.bot.id
        await died_answering(port, "telegram", f"{bot_id}:77")
        early = await post_update(http, update)
        port.clock.advance(DEAD_ALIVE_SECONDS + 0.2)
        late = await post_update(http, update)
        await wait_sent(tg)
        last = await post_update(http, update)
        await settle()
    assert early.status_code == 503 and int(early.headers["retry-after"]) > 0
    assert [late.status_code, last.status_code] == [200, 200]
    assert len(handler.asked) == 1 and len(tg.calls("sendMessage")) == 1


async def test_telegram_chatter_not_for_the_bot_claims_nothing(
        tg: FakeTelegram, port: MemoryCoordination) -> None:
    update = message_update(78, "lunch anyone?", chat=group_chat(GROUP))
    async with running(tg, port) as (adapter, http):
        answer = await post_update(http, update)
        await settle()
        name = port.keys.claim(Keys.seen("telegram", f"{adapter.application.bot.id}:78"))
    assert answer.status_code == 200
    assert not await port.claims.exists(name)
