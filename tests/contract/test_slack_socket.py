"""Slack Socket Mode: Bolt's aiohttp Socket Mode client against the fake Slack's WebSocket.

The same listeners as HTTP mode answer; envelopes are acknowledged over the socket and a
re-sent envelope (`retry_attempt`) is answered once.
"""

from __future__ import annotations

import pytest

from adapters.slack.adapter import SlackAdapter
from adapters.slack.settings import SlackSecrets, SlackSettings
from bot.actions import encode_action
from bot.config import Config
from bot.models import Command
from bot.store.claims import Claims
from testkit.coordination import local_claims
from testkit.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads, envelope_for
from testkit.slack_checks import assert_valid
from testkit.slack_http import RecordingHandler, real_handler, shown


@pytest.fixture
def socket_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    monkeypatch.delenv("SLACK_SIGNING_SECRET", raising=False)


def acked(fake: FakeSlack, envelope_id: str) -> bool:
    return any(m.get("envelope_id") == envelope_id for m in fake.socket_received)


async def test_socket_mode_answers_a_slash_command_and_acks_the_envelope(
    fake_slack: FakeSlack, config: Config, deduper: Claims, socket_env: None
) -> None:
    adapter = SlackAdapter.from_config(config, real_handler(config), deduper,
                                       api_url=fake_slack.base_url, socket_mode=True)
    assert adapter is not None
    assert adapter.routes() == []  # no signing secret: nothing is mounted over HTTP
    await adapter.start()
    try:
        await adapter.start()  # idempotent
        await fake_slack.wait_for_async(lambda: fake_slack.socket_connections == 1)
        [opened] = fake_slack.calls("apps.connections.open")
        assert opened.headers["authorization"] == f"Bearer {APP_TOKEN}"
        assert adapter.status()["mode"] == "socket"
        assert adapter.status()["socket_connected"] is True
        payload = SlackPayloads().slash_command("summary #1203",
                                                response_url=fake_slack.response_url())
        fake_slack.send_envelope(envelope_for(payload, "slash_commands", envelope_id="env-1"))
        await fake_slack.wait_for_async(lambda: acked(fake_slack, "env-1"))
        await fake_slack.wait_for_async(lambda: len(fake_slack.posted("response")) == 1)
    finally:
        await adapter.close()
    [answer] = fake_slack.posted("response")
    assert_valid(answer)
    assert "#1203" in shown(answer)
    assert adapter.status()["socket_connected"] is False


async def test_socket_mode_answers_a_re_sent_event_once(
    fake_slack: FakeSlack, config: Config, deduper: Claims, socket_env: None
) -> None:
    handler = RecordingHandler()
    adapter = SlackAdapter.from_config(config, handler, deduper,
                                       api_url=fake_slack.base_url, socket_mode=True)
    assert adapter is not None
    payloads = SlackPayloads()
    body = payloads.event_callback(payloads.app_mention("<@UBOT0001> topics"))
    await adapter.start()
    try:
        await fake_slack.wait_for_async(lambda: fake_slack.socket_connections == 1)
        fake_slack.send_envelope(envelope_for(body, "events_api", envelope_id="env-2"))
        fake_slack.send_envelope(envelope_for(body, "events_api", envelope_id="env-3",
                                              retry_attempt=1, retry_reason="timeout"))
        await fake_slack.wait_for_async(
            lambda: acked(fake_slack, "env-2") and acked(fake_slack, "env-3"))
        await fake_slack.wait_for_async(lambda: len(fake_slack.posted()) >= 1)
        await adapter.drain()
    finally:
        await adapter.close()
    assert len(handler.asked) == 1
    [post] = fake_slack.posted()
    assert post["thread_ts"] == body["event"]["ts"]


async def test_socket_mode_answers_a_click_delivered_twice_once(
    fake_slack: FakeSlack, config: Config, deduper: Claims, socket_env: None
) -> None:
    data = encode_action(Command(kind="summary", pull=1203))
    assert data is not None
    adapter = SlackAdapter.from_config(config, real_handler(config), deduper,
                                       api_url=fake_slack.base_url, socket_mode=True)
    assert adapter is not None
    click = SlackPayloads().button_click(data, response_url=fake_slack.response_url("c1"))
    await adapter.start()
    try:
        await fake_slack.wait_for_async(lambda: fake_slack.socket_connections == 1)
        for envelope_id in ("env-c1", "env-c2"):  # one click, re-sent after a reconnect
            fake_slack.send_envelope(envelope_for(click, "interactive",
                                                  envelope_id=envelope_id))
        await fake_slack.wait_for_async(
            lambda: acked(fake_slack, "env-c1") and acked(fake_slack, "env-c2"))
        await fake_slack.wait_for_async(lambda: len(fake_slack.posted("response")) >= 1)
        await adapter.drain()
    finally:
        await adapter.close()
    [answer] = fake_slack.posted("response")
    assert_valid(answer)
    assert "#1203" in shown(answer)


def test_socket_mode_needs_the_app_token(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
    assert SlackAdapter.from_config(config, RecordingHandler(), local_claims(),
                                    socket_mode=True) is None
    with pytest.raises(ValueError, match="app-level token"):
        SlackAdapter(config, RecordingHandler(), local_claims(), SlackSecrets(BOT_TOKEN),
                     SlackSettings(socket_mode=True))
