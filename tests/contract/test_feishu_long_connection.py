"""The long connection (lark.ws.Client) against a fake gateway: events arrive as
protobuf frames over a WebSocket, answers leave over HTTP.

lark_oapi.ws.client keeps an event loop in a module global and blocks on it; the
adapter runs it in a thread with a loop of its own. Running the test twice in one
process shows a second client does not trip over the first one's loop.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import uuid
from datetime import UTC, datetime

import pytest

from bot.actions import encode_action
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import load_config
from bot.digests import Digests
from bot.models import Command
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit import EXAMPLES
from testkit.coordination import local_claims
from testkit.fakes.feishu import (
    WS_ENDPOINT_PATH,
    FakeFeishu,
    bot_mention,
    card_action_event,
    message_event,
)
from testkit.feishu_bot import feishu_adapter

CONFIG = load_config(EXAMPLES / "prdigest.toml")
SNAPSHOT = read_snapshot(EXAMPLES / "snapshot.json")


def long_connection_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "feishu-long-connection"]


@pytest.mark.parametrize("run", [1, 2])
async def test_an_event_over_the_long_connection_is_answered(run: int) -> None:
    handler = CommandHandler(Digests(CONFIG, SnapshotSource(SNAPSHOT),
                                     clock=HeldClock(datetime(2026, 7, 17, tzinfo=UTC))))
    with FakeFeishu(app_id=f"cli_{uuid.uuid4().hex[:16]}", app_secret="s") as fake:
        adapter = feishu_adapter(CONFIG, handler, local_claims(), app_id=fake.app_id,
                                 app_secret="s",
                                 domain=fake.base_url, long_connection=True, auto_reconnect=False)
        assert adapter.routes() == []
        await adapter.start()
        try:
            event = message_event("@_user_1 summary #1203", token="", mentions=[bot_mention()],
                                  event_id=f"ev-ws-{run}")
            ack = await asyncio.to_thread(fake.push_event, event)
            assert ack["code"] == 200
            # Delivered twice (the gateway re-sends when unsure): still one answer.
            assert (await asyncio.to_thread(fake.push_event, event))["code"] == 200
            for _ in range(200):
                if fake.sent_cards():
                    break
                await asyncio.sleep(0.02)
            await adapter.wait_idle()
            assert adapter.status()["long_connection_running"]
        finally:
            await adapter.close()
        (sent,) = fake.sent_cards()
        (endpoint,) = fake.calls(WS_ENDPOINT_PATH)
    assert endpoint.json() == {"AppID": fake.app_id, "AppSecret": "s"}
    assert (sent.endpoint, sent.target) == ("reply", "om_question_1")
    assert sent.card["header"]["title"]["content"] == "Summary of PR #1203"
    assert not adapter.status()["long_connection_running"]
    assert long_connection_threads() == []


async def test_an_event_the_bot_does_not_handle_is_refused_politely() -> None:
    with FakeFeishu(app_id=f"cli_{uuid.uuid4().hex[:16]}", app_secret="s") as fake:
        adapter = feishu_adapter(CONFIG, CommandHandler(Digests(CONFIG, SnapshotSource(SNAPSHOT))),
                                 local_claims(), app_id=fake.app_id, app_secret="s",
                                 domain=fake.base_url, long_connection=True, auto_reconnect=False,
                                 bot_open_id="ou_fake_bot")
        await adapter.start()
        try:
            event = message_event("x", token="")
            event["header"]["event_type"] = "im.chat.updated_v1"
            ack = await asyncio.to_thread(fake.push_event, event)
        finally:
            await adapter.close()
        assert ack["code"] == 500 and fake.sent_cards() == []


async def test_a_click_over_the_long_connection_gets_a_toast_and_one_answer() -> None:
    handler = CommandHandler(Digests(CONFIG, SnapshotSource(SNAPSHOT),
                                     clock=HeldClock(datetime(2026, 7, 17, tzinfo=UTC))))
    data = encode_action(Command(kind="summary", pull=1203))
    assert data is not None
    with FakeFeishu(app_id=f"cli_{uuid.uuid4().hex[:16]}", app_secret="s") as fake:
        adapter = feishu_adapter(CONFIG, handler, local_claims(), app_id=fake.app_id,
                                 app_secret="s",
                                 domain=fake.base_url, long_connection=True, auto_reconnect=False,
                                 bot_open_id="ou_fake_bot")
        await adapter.start()
        try:
            click = card_action_event(data, token="", event_id="ev-click-1",
                                      chat_id="oc_0123456789abcdef", message_id="om_digest_7")
            acks = [await asyncio.to_thread(fake.push_event, click) for _ in range(2)]
            for _ in range(200):
                if fake.sent_cards():
                    break
                await asyncio.sleep(0.02)
            await adapter.wait_idle()
        finally:
            await adapter.close()
        (sent,) = fake.sent_cards()  # delivered twice, answered once
    assert [ack["code"] for ack in acks] == [200, 200]
    toast = json.loads(base64.b64decode(acks[0]["data"]))["toast"]
    assert toast["i18n"]["zh_cn"] == "正在处理…"
    assert (sent.endpoint, sent.target) == ("reply", "om_digest_7")
    assert "1203" in sent.card["header"]["title"]["content"]
