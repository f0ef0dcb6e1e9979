"""The Slack App Home tab: the real Bolt app and slack_sdk against the fake Slack,
`app_home_opened` signed as Slack signs it. A user sees the channels this bot serves
that they are in (file-configured and chat-made ones, and their direct conversation
with the bot), each with its settings; never a private channel they are not in."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from adapters.slack.adapter import EVENTS_PATH
from bot.chat.handler import CommandHandler
from bot.clock import Clock, HeldClock
from bot.config import ChannelConfig, Config
from bot.digests import Digests
from bot.live import LiveConfig
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.chat_settings import ChatSettings
from bot.store.claims import Claims
from testkit import EXAMPLES
from testkit.clock import VirtualClock
from testkit.fakes.chat import InMemoryChatSettings, InMemorySubscriptionStore
from testkit.fakes.slack import FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads, signed_headers
from testkit.slack_checks import markup_problems, texts_of
from testkit.slack_http import CHANNEL, JSON, NOW, http_client, make_adapter

USER, OTHER, BOT = "U0USER01", "U0OTHER1", "UBOT0001"
PUBLIC_ELSEWHERE = ChannelConfig(platform="slack", id="C0OTHER01", repo="acme/lumen",
                                 lang="en", timezone="America/Chicago")
PRIVATE_NOT_THEIRS = ChannelConfig(platform="slack", id="C0PRIVAT1",
                                   repo="verl-project/verl", lang="en",
                                   timezone="Pacific/Auckland")
PRIVATE_THEIRS = ChannelConfig(platform="slack", id="C0PRIVAT2", repo="verl-project/verl",
                               lang="en", timezone="Europe/Lisbon", schedule="0 8 * * TUE")
LAST = ChannelConfig(platform="slack", id="CZZLAST01", repo="acme/lumen", lang="en",
                     timezone="Asia/Tokyo")
CHAT_MADE = "C0CHAT001"
DIRECT = "D0DIRECT1"


def home_config(config: Config) -> Config:
    return msgspec.structs.replace(config, channels=(
        *config.channels, PUBLIC_ELSEWHERE, PRIVATE_NOT_THEIRS, PRIVATE_THEIRS, LAST))


def live_handler(config: Config, clock: Clock | None = None
                 ) -> tuple[CommandHandler, InMemoryChatSettings]:
    """A handler on a live config whose chats set up two channels from chat: one the
    user is in, and the user's direct conversation with the bot."""
    store = InMemoryChatSettings()
    store.put(f"slack:{CHAT_MADE}", ChatSettings(repos=("acme/lumen",), lang="en",
                                                  schedule="0 10 * * FRI",
                                                  timezone="Africa/Nairobi"))
    store.put(f"slack:{DIRECT}", ChatSettings(repos=("acme/lumen",), lang="en",
                                               timezone="America/Lima"))
    live = LiveConfig(config, store)
    live.read_chats()
    source = SnapshotSource(read_snapshot(EXAMPLES / "snapshot.json"))
    digests = Digests(live, source, subscriptions=InMemorySubscriptionStore(),
                      clock=clock or HeldClock(NOW))
    return CommandHandler(digests, live=live), store


def seat(fake: FakeSlack) -> None:
    """Who is in which channel, as Slack knows it."""
    fake.members = {CHANNEL: {USER, BOT}, PUBLIC_ELSEWHERE.id: {OTHER, BOT},
                    PRIVATE_NOT_THEIRS.id: {OTHER, BOT}, PRIVATE_THEIRS.id: {USER, BOT},
                    CHAT_MADE: {USER, BOT, OTHER}, LAST.id: {USER, BOT}}
    # Enough channels of no concern to the bot that the user's list takes three pages.
    for n in range(450):
        fake.members[f"C1{n:07d}"] = {USER}
    fake.private_channels = {PRIVATE_NOT_THEIRS.id, PRIVATE_THEIRS.id}


def opened(user: str = USER, *, channel: str = DIRECT, tab: str = "home") -> str:
    payloads = SlackPayloads()
    return json.dumps(payloads.event_callback(
        payloads.app_home_opened(user=user, channel=channel, tab=tab)))


async def open_home(adapter: Any, body: str) -> int:
    async with http_client(adapter) as client:
        response = await client.post(EVENTS_PATH, content=body.encode(),
                                     headers=signed_headers(body, content_type=JSON))
        await adapter.drain()
    return response.status_code


def published(fake: FakeSlack) -> list[dict[str, Any]]:
    return fake.posted("views.publish")


def view_text(call: dict[str, Any]) -> str:
    return "\n".join(texts_of(call["view"]["blocks"]))


def channels_shown(text: str) -> set[str]:
    return set(re.findall(r"<#([A-Z0-9]+)>", text))


async def test_the_home_tab_shows_exactly_the_users_channels_with_their_settings(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = home_config(config)
    seat(fake_slack)
    fake_slack.locales = {USER: "en-US"}
    handler, _ = live_handler(config)
    adapter = make_adapter(config, handler, deduper, fake_slack)
    assert await open_home(adapter, opened()) == 200
    [call] = published(fake_slack)
    assert call["user_id"] == USER and call["view"]["type"] == "home"
    text = view_text(call)
    assert channels_shown(text) == {CHANNEL, PRIVATE_THEIRS.id, CHAT_MADE, LAST.id}
    assert "Our direct messages" in text
    # Each one's own settings: the file's and those set from chat.
    for zone in ("Asia/Shanghai", PRIVATE_THEIRS.timezone, "Africa/Nairobi", LAST.timezone,
                 "America/Lima"):
        assert zone in text
    assert "Fridays at 10:00" in text and "Tuesdays at 08:00" in text
    assert "`verl-project/verl`" in text and "`npu`" in text
    # Nothing of the channels the user is not in, the private one above all.
    for zone in (PUBLIC_ELSEWHERE.timezone, PRIVATE_NOT_THEIRS.timezone):
        assert zone not in text
    # Every `<` is a link or the channel names the tab writes itself.
    assert all(markup_problems(re.sub(r"<#[A-Z0-9]+>", "", t)) == []
               for t in texts_of(call["view"]["blocks"]))


async def test_a_private_channel_shows_to_its_members_only(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = home_config(config)
    seat(fake_slack)
    handler, _ = live_handler(config)
    adapter = make_adapter(config, handler, deduper, fake_slack)
    await open_home(adapter, opened(OTHER, channel="D0OTHER01"))
    [call] = published(fake_slack)
    text = view_text(call)
    assert channels_shown(text) == {PUBLIC_ELSEWHERE.id, PRIVATE_NOT_THEIRS.id, CHAT_MADE}
    assert PRIVATE_NOT_THEIRS.timezone in text
    # Not the user's direct conversation with the bot either.
    assert "America/Lima" not in text and PRIVATE_THEIRS.timezone not in text


async def test_the_home_tab_speaks_the_users_language(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = home_config(config)
    seat(fake_slack)
    fake_slack.locales = {USER: "zh-CN"}
    handler, _ = live_handler(config)
    adapter = make_adapter(config, handler, deduper, fake_slack)
    await open_home(adapter, opened())
    text = view_text(published(fake_slack)[0])
    assert "我们的私信" in text and "Our direct messages" not in text
    assert "Repositories" not in text


async def test_a_user_in_none_of_the_channels_is_told_how_to_start(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = home_config(config)
    seat(fake_slack)
    handler, _ = live_handler(config)
    adapter = make_adapter(config, handler, deduper, fake_slack)
    await open_home(adapter, opened("U0LONELY1", channel="D0LONELY1"))
    [call] = published(fake_slack)
    text = view_text(call)
    assert channels_shown(text) == set()
    assert "follow owner/repo" in text and "Asia/Shanghai" not in text


async def test_membership_that_cannot_be_read_shows_no_channel(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = home_config(config)
    seat(fake_slack)
    fake_slack.fail_next("users.conversations", body={"ok": False, "error": "missing_scope"})
    handler, _ = live_handler(config)
    adapter = make_adapter(config, handler, deduper, fake_slack)
    await open_home(adapter, opened())
    [call] = published(fake_slack)
    text = view_text(call)
    assert channels_shown(text) == set() and "Asia/Shanghai" not in text
    assert "could not tell which channels you are in just now" in text


async def test_membership_is_kept_a_minute_and_the_messages_tab_publishes_nothing(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = home_config(config)
    seat(fake_slack)
    clock = VirtualClock(NOW)
    handler, _ = live_handler(config, clock)
    adapter = make_adapter(config, handler, deduper, fake_slack, clock=clock)
    await open_home(adapter, opened(tab="messages"))
    assert published(fake_slack) == []
    await open_home(adapter, opened())
    clock.advance(30)
    # Left the channel meanwhile: seen at the next read, a minute after the last.
    fake_slack.members[CHANNEL].discard(USER)
    await open_home(adapter, opened())
    assert len(published(fake_slack)) == 2
    assert len(fake_slack.calls("users.conversations")) == 3  # 450+ channels: 3 pages, once
    assert CHANNEL in channels_shown(view_text(published(fake_slack)[1]))
    clock.advance(31)
    await open_home(adapter, opened())
    assert len(fake_slack.calls("users.conversations")) == 6
    assert CHANNEL not in channels_shown(view_text(published(fake_slack)[2]))


async def test_a_chat_made_channel_appears_once_set_up(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = home_config(config)
    seat(fake_slack)
    handler, store = live_handler(config)
    adapter = make_adapter(config, handler, deduper, fake_slack)
    fake_slack.members["C0LATER01"] = {"U0LATER01", BOT}
    await open_home(adapter, opened("U0LATER01", channel="D0LATER01"))
    store.put("slack:C0LATER01", ChatSettings(repos=("acme/lumen",), timezone="Asia/Dubai"))
    assert channels_shown(view_text(published(fake_slack)[0])) == set()
    await open_home(adapter, opened("U0LATER01", channel="D0LATER01"))
    text = view_text(published(fake_slack)[1])
    assert channels_shown(text) == {"C0LATER01"} and "Asia/Dubai" in text


async def test_a_forged_home_opened_gets_401_and_causes_nothing(
    fake_slack: FakeSlack, config: Config, deduper: Claims, slack_env: None
) -> None:
    config = home_config(config)
    seat(fake_slack)
    handler, _ = live_handler(config)
    adapter = make_adapter(config, handler, deduper, fake_slack)
    body = opened()
    async with http_client(adapter) as client:
        forged = signed_headers(body, secret="not-the-signing-secret", content_type=JSON)
        response = await client.post(EVENTS_PATH, content=body.encode(), headers=forged)
        await adapter.drain()
    assert response.status_code == 401
    assert fake_slack.requests == []
