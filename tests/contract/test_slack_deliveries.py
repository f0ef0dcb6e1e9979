"""Slack deliveries the bot has no listener for are still acknowledged: Slack turns off an
app's event subscriptions when more than 5% of an hour's deliveries are not answered 200.
Each is logged once; none is answered in chat. The payloads are Slack's documented
shapes (tests/payloads/slack), signed as Slack signs them, over HTTP and Socket Mode."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.adapter.socket_mode.async_internals import run_async_bolt_app
from slack_sdk.socket_mode.request import SocketModeRequest

from bot.config import Config
from bot.store.claims import Claims
from testkit.fakes.slack import FakeSlack
from testkit.slack_http import (
    JSON,
    RecordingHandler,
    http_client,
    make_adapter,
    post_signed,
    real_handler,
    shown,
)

PAYLOADS = Path(__file__).resolve().parent.parent / "payloads" / "slack"
UNHEARD = ("app_rate_limited", "app_uninstalled", "tokens_revoked", "reaction_added",
           "member_joined_channel")


def payload(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text("utf-8"))
    return loaded


def _logged(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if name in r.getMessage()]


@pytest.mark.parametrize("name", UNHEARD)
async def test_a_delivery_without_a_listener_is_acknowledged_and_logged_once(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, name: str,
    caplog: pytest.LogCaptureFixture
) -> None:
    handler = RecordingHandler()
    adapter = make_adapter(config, handler, deduper, fake_slack)
    with caplog.at_level(logging.DEBUG):
        async with http_client(adapter) as client:
            response = await post_signed(client, json.dumps(payload(name)), JSON)
            await adapter.drain()
    assert response.status_code == 200
    assert handler.asked == [] and fake_slack.posted() == []
    [record] = _logged(caplog, name)
    assert record.levelno == (logging.WARNING if name == "app_rate_limited" else logging.INFO)
    assert not any("Unhandled request" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("name", UNHEARD)
async def test_over_socket_mode_the_envelope_is_acknowledged_too(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None, name: str
) -> None:
    adapter = make_adapter(config, RecordingHandler(), deduper, fake_slack)
    body = payload(name)
    request = SocketModeRequest(type="events_api", envelope_id=f"env-{name}", payload=body)
    response = await run_async_bolt_app(adapter.app, request)
    # Bolt's Socket Mode handler acknowledges the envelope only on a 200.
    assert response.status == 200


async def test_an_unsigned_delivery_without_a_listener_is_still_refused(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, RecordingHandler(), deduper, fake_slack)
    async with http_client(adapter) as client:
        response = await client.post("/slack/events", content=json.dumps(
            payload("reaction_added")), headers={"Content-Type": JSON})
    assert response.status_code == 401


async def test_the_help_for_a_mention_leaves_the_bots_own_mention_out(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, real_handler(config), deduper, fake_slack)
    async with http_client(adapter) as client:
        response = await post_signed(client, json.dumps(payload("app_mention_help")), JSON)
        await adapter.drain()
    assert response.status_code == 200
    [post] = fake_slack.posted()
    text = shown(post)
    assert "what can you do" in text
    assert "UBOT0001" not in text and "&lt;@" not in text and "<@" not in text
