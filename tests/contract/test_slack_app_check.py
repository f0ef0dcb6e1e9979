"""Slack payloads from another workspace or app are not answered once
`platforms.slack.team_ids` / `app_id` are set, and a slash command's `response_url`
never reaches the logs, not even at DEBUG."""

from __future__ import annotations

import json
import logging
from urllib.parse import urlencode

import msgspec
import pytest

from bot.config import Config
from bot.store.claims import Claims
from testkit.clock import VirtualClock
from testkit.fakes.slack import FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads
from testkit.slack_http import (
    FORM,
    JSON,
    http_client,
    make_adapter,
    post_signed,
    real_handler,
    slash,
)

OURS = SlackPayloads(team_id="T0TEAM01", api_app_id="A0FAKE01")


def checking(config: Config, *, teams: tuple[str, ...] = ("T0TEAM01",),
             app: str | None = "A0FAKE01") -> Config:
    slack = {**config.platforms.get("slack", {}), "team_ids": list(teams), "app_id": app}
    return msgspec.structs.replace(config, platforms={**config.platforms, "slack": slack})


@pytest.mark.parametrize("stranger", [
    SlackPayloads(team_id="T0OTHER99", api_app_id="A0FAKE01"),
    SlackPayloads(team_id="T0TEAM01", api_app_id="A0OTHER99"),
], ids=["other-team", "other-app"])
async def test_a_foreign_slash_command_is_acknowledged_and_not_answered(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    stranger: SlackPayloads, caplog: pytest.LogCaptureFixture
) -> None:
    settings = checking(config)
    adapter = make_adapter(settings, real_handler(settings), deduper, fake_slack)
    with caplog.at_level(logging.INFO, logger="adapters.slack.adapter"):
        async with http_client(adapter) as client:
            foreign = await post_signed(client, slash(stranger, fake_slack, "topics"), FORM)
            await adapter.drain()
            assert foreign.status_code == 200  # acknowledged, so Slack does not retry
            assert fake_slack.calls("response") == []
            assert fake_slack.calls("chat.postMessage") == []
            ours = await post_signed(client, slash(OURS, fake_slack, "topics"), FORM)
            await adapter.drain()
    assert ours.status_code == 200
    assert len(fake_slack.posted("response")) == 1
    ignored = [r for r in caplog.records if "ignored" in r.getMessage()]
    assert len(ignored) == 1 and "not the configured app" in ignored[0].getMessage()


async def test_a_foreign_mention_gets_no_answer(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    settings = checking(config, app=None)
    adapter = make_adapter(settings, real_handler(settings), deduper, fake_slack)
    stranger = SlackPayloads(team_id="T0OTHER99")
    async with http_client(adapter) as client:
        body = json.dumps(stranger.event_callback(stranger.app_mention("<@UBOT0001> topics")))
        answer = await post_signed(client, body, JSON)
        await adapter.drain()
        assert answer.status_code == 200
        assert fake_slack.calls("chat.postMessage") == []
        body = json.dumps(OURS.event_callback(OURS.app_mention("<@UBOT0001> topics")))
        await post_signed(client, body, JSON)
        await adapter.drain()
    assert len(fake_slack.posted("chat.postMessage")) == 1


async def test_without_the_settings_every_workspace_is_answered_as_before(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    adapter = make_adapter(config, real_handler(config), deduper, fake_slack)
    stranger = SlackPayloads(team_id="T0OTHER99", api_app_id="A0OTHER99")
    async with http_client(adapter) as client:
        await post_signed(client, slash(stranger, fake_slack, "topics"), FORM)
        await adapter.drain()
    assert len(fake_slack.posted("response")) == 1


async def test_the_response_url_is_never_logged(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None,
    caplog: pytest.LogCaptureFixture
) -> None:
    clock = VirtualClock()  # the 429's wait passes at once
    adapter = make_adapter(config, real_handler(config), deduper, fake_slack, clock=clock)
    url = fake_slack.response_url("secret-hook-T0TEAM01")
    # A 429 first: slack_sdk names the URL it retries at INFO, not only at DEBUG.
    fake_slack.fail_next("response", status=429, body="rate_limited",
                         headers={"Retry-After": "1"})
    with caplog.at_level(logging.DEBUG):
        async with http_client(adapter) as client:
            body = urlencode(OURS.slash_command("topics", response_url=url))
            await post_signed(client, body, FORM)
            await adapter.drain()
    assert fake_slack.posted("response"), "the answer still went out"
    assert clock.slept == [1.0]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "/<redacted>" in logged  # the SDK did log the calls, without the path
    assert "secret-hook" not in logged
