"""A Telegram bot on the fake Bot API: the example config with a private chat added,
its week, a handler that records what it is asked, and the adapter behind an ASGI
client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec
from starlette.applications import Starlette

from adapters.sending import Limits
from adapters.telegram.adapter import WEBHOOK_PATH, TelegramAdapter
from adapters.telegram.settings import TelegramSecrets, TelegramSettings
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import ChannelConfig, Config, load_config
from bot.digests import Digests
from bot.engine import build_digest
from bot.models import Command, Digest, Reply, Snapshot
from bot.pacing import LocalPacer
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.coordination import Coordination
from testkit.clock import VirtualClock
from testkit.coordination import claims_on
from testkit.fakes.chat import InMemorySubscriptionStore
from testkit.fakes.telegram import (
    FakeTelegram,
    parse_html,
)

ROOT = Path(__file__).resolve().parents[1]


SECRET = "webhook-Secret_0123456789"


GROUP = -1001234567890  # configured in examples/prdigest.toml, English


PRIVATE = 4242  # configured below, Chinese


NOW = datetime(2026, 7, 19, 4, 0, tzinfo=UTC)  # Sunday of 2026-W29 in Shanghai and Berlin


WEEK = "2026-W29"


def _config() -> Config:
    config = load_config(ROOT / "examples" / "prdigest.toml")
    private = ChannelConfig(platform="telegram", id=str(PRIVATE), repo="acme/lumen", lang="zh")
    return msgspec.structs.replace(config, channels=(*config.channels, private))


CONFIG = _config()


SNAPSHOT: Snapshot = read_snapshot(ROOT / "examples" / "snapshot.json")


class SpyHandler:
    """Records the commands it is asked; answers with the real handler or raises."""

    def __init__(self, *, fail: bool = False) -> None:
        self.inner = CommandHandler(Digests(CONFIG, SnapshotSource(SNAPSHOT),
                                            subscriptions=InMemorySubscriptionStore(),
                                            clock=HeldClock(NOW)))
        self.fail = fail
        self.asked: list[tuple[Command, ChannelConfig | None, str | None]] = []

    async def chat_channel(self, chat: str) -> ChannelConfig | None:
        return await self.inner.chat_channel(chat)

    async def handle(self, command: Command, *, channel: ChannelConfig | None,
                     user: str | None, asker: Any = None) -> Reply:
        self.asked.append((command, channel, user))
        if self.fail:
            raise RuntimeError("boom: /home/prdigest/secret/path")
        return await self.inner.handle(command, channel=channel, user=user, asker=asker)


@asynccontextmanager
async def running(
    tg: FakeTelegram, port: Coordination, *, handler: SpyHandler | None = None,
    start: bool = True, **options: Any,
) -> AsyncIterator[tuple[TelegramAdapter, httpx.AsyncClient]]:
    """An adapter on the fake, its webhook route behind an ASGI client; it tells
    deliveries apart in `port`'s claims, and takes its turns (and waits out flood
    control) on a virtual clock - its `clock`, when given one - unless given a `pacer`.
    `options`: fields of `[platforms.telegram]`, the `token` and `secret_token`, or the
    adapter's other arguments."""
    fields = set(TelegramSettings.__struct_fields__)
    settings = TelegramSettings(api_url=tg.base_url, **{
        name: options.pop(name) for name in list(options) if name in fields})
    arguments: dict[str, Any] = {
        # Two tries after a 429, not Telegram's three: the tests' floods end sooner.
        "limits": Limits(attempts=3, max_wait=60.0, longest_hold=60.0),
        "pacer": LocalPacer(options.get("clock") or VirtualClock()),
        **options}
    secrets = TelegramSecrets(arguments.pop("token", tg.token),
                              arguments.pop("secret_token", SECRET))
    adapter = TelegramAdapter(CONFIG, handler or SpyHandler(), claims_on(port), secrets,
                              settings, **arguments)
    app = Starlette(routes=adapter.routes())
    try:
        if start:
            await adapter.start()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bot.test") as http:
            yield adapter, http
    finally:
        await adapter.close()


async def post_update(http: httpx.AsyncClient, update: dict[str, Any] | str | bytes,
                      secret: str | None = SECRET) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    body = update if isinstance(update, (str, bytes)) else json.dumps(update)
    return await http.post(WEBHOOK_PATH, content=body, headers=headers)


async def wait_sent(tg: FakeTelegram, count: int = 1) -> list[dict[str, str]]:
    await asyncio.to_thread(tg.wait_for, "sendMessage", count)
    return tg.sent()


async def settle() -> None:
    """Time for anything queued to have reached the fake, had it been sent."""
    await asyncio.sleep(0.3)


def plain_of(html_text: str) -> str:
    return parse_html(html_text)[0]


SMALL_MESSAGES = 1500  # a message limit under which the example digest takes two


def example_digest(lang: str = "en") -> Digest:
    return build_digest(SNAPSHOT, WEEK, repo_config=CONFIG.repo("acme/lumen"),
                        lang=lang)  # type: ignore[arg-type]
