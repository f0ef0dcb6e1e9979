"""The Slack adapter over HTTP in a test: built on the fake Slack, its route behind an
ASGI client, signed requests, and handlers that record what they are asked (the
adapters a test makes are closed after it by tests/contract/conftest.py)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import httpx
from starlette.applications import Starlette

from adapters.slack.adapter import EVENTS_PATH, SlackAdapter
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import ChannelConfig, Config
from bot.digests import Digests
from bot.models import Command, Reply
from bot.pacing import LocalPacer
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.claims import Claims
from testkit import EXAMPLES
from testkit.clock import VirtualClock
from testkit.fakes.chat import InMemorySubscriptionStore
from testkit.fakes.slack import FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads, signed_headers
from testkit.slack_checks import texts_of

NOW = datetime(2026, 7, 22, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))  # 2026-W30


CHANNEL = "C0123456"  # the example config's Slack channel (zh, acme/lumen)


FORM = "application/x-www-form-urlencoded"


JSON = "application/json"


def real_handler(config: Config) -> CommandHandler:
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    return CommandHandler(Digests(config, SnapshotSource(snapshot),
                                  subscriptions=InMemorySubscriptionStore(), clock=HeldClock(NOW)))


class RecordingHandler:
    """Answers with a fixed reply (or raises), recording what it was asked."""

    def __init__(self, reply: Reply | None = None, *, fail: bool = False,
                 gate: asyncio.Event | None = None, config: Config | None = None) -> None:
        self.reply = reply or Reply(kind="subscribed", lang="en", topics=("npu",))
        self.fail = fail
        self.gate = gate
        self.asked: list[tuple[Command, ChannelConfig | None, str | None]] = []
        # The channels chats are (`make_adapter` gives the adapter's config).
        self.config = config

    async def chat_channel(self, chat: str) -> ChannelConfig | None:
        return self.config.channel(chat) if self.config is not None else None

    async def handle(self, command: Command, *, channel: ChannelConfig | None,
                     user: str | None = None, asker: Any = None) -> Reply:
        self.asked.append((command, channel, user))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise RuntimeError("handler broke")
        return self.reply


OPEN_ADAPTERS: list[SlackAdapter] = []


def make_adapter(config: Config, handler: Any, deduper: Claims, fake: FakeSlack,
                 **overrides: Any) -> SlackAdapter:
    """The adapter on the fake; it takes its turns on a virtual clock - its `clock`, when
    given one - unless given a `pacer` (a chat's one message a second costs no wall
    time)."""
    overrides.setdefault("pacer", LocalPacer(overrides.get("clock") or VirtualClock()))
    if isinstance(handler, RecordingHandler) and handler.config is None:
        handler.config = config
    adapter = SlackAdapter.from_config(config, handler, deduper, api_url=fake.base_url,
                                       **overrides)
    assert adapter is not None
    OPEN_ADAPTERS.append(adapter)
    return adapter


def http_client(adapter: SlackAdapter) -> httpx.AsyncClient:
    app = Starlette(routes=adapter.routes())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot")


async def post_signed(client: httpx.AsyncClient, body: str, content_type: str,
                      **sign: Any) -> httpx.Response:
    headers = signed_headers(body, content_type=content_type, **sign)
    return await client.post(EVENTS_PATH, content=body.encode(), headers=headers)


def slash(payloads: SlackPayloads, fake: FakeSlack, text: str, **values: Any) -> str:
    return urlencode(payloads.slash_command(text, response_url=fake.response_url(), **values))


def shown(payload: dict[str, Any]) -> str:
    return "\n".join(texts_of(payload.get("blocks", [])))
