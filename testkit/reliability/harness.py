"""prdigest in-process against the fakes, as the tests and `bench/faults.py` drive it:
its HTTP client, helpers that ask as each platform does (signed, encrypted), the
environment that points it at the fakes, and a capture of every log record."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from bot.github.source import GitHubSource
from bot.web.app import create_app
from bot.web.services import Services
from testkit.clock import VirtualClock
from testkit.fakes.feishu import bot_mention, card_action_event, encrypt, message_event
from testkit.fakes.feishu import signed_headers as feishu_headers
from testkit.fakes.slack_payloads import SlackPayloads
from testkit.fakes.slack_payloads import signed_headers as slack_headers
from testkit.fakes.telegram import click_update, group_chat, message_update
from testkit.fakes.telegram import user as telegram_user
from testkit.reliability.names import SECRETS, SLACK_CHANNEL, TELEGRAM_CHAT
from testkit.reliability.world import Urls, World, clock, write_config
from testkit.server_support import PLATFORM_ENV, serving, sign


class LogCapture(logging.Handler):
    """Every record of every logger, formatted with its traceback, at DEBUG."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception as exc:  # a record that cannot format is itself worth seeing
            self.lines.append(f"UNFORMATTABLE {record.name}: {exc!r}")

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class Service:
    """prdigest in-process: its app's HTTP client, its parts, the fakes it talks to."""

    http: httpx.AsyncClient
    services: Services
    world: World
    sleeps: list[float]
    """Waits the GitHub source asked for, recorded instead of slept."""
    responses: list[httpx.Response] = field(default_factory=list)
    payloads: SlackPayloads = field(default_factory=SlackPayloads)
    update_ids: list[int] = field(default_factory=lambda: [1000])

    async def post(self, path: str, **kwargs: Any) -> httpx.Response:
        response = await self.http.post(path, **kwargs)
        self.responses.append(response)
        return response

    async def get(self, path: str, **kwargs: Any) -> httpx.Response:
        response = await self.http.get(path, **kwargs)
        self.responses.append(response)
        return response

    # -- asking as each platform does --

    async def slack(self, text: str, *, user: str = "U0USER01", channel: str = SLACK_CHANNEL
                    ) -> list[dict[str, Any]]:
        """A signed `/prdigest` slash command; returns the answers on its response_url."""
        name = uuid.uuid4().hex[:12]
        body = urlencode(self.payloads.slash_command(
            text, channel_id=channel, user_id=user,
            response_url=self.world.slack.response_url(name)))
        answer = await self.post("/slack/events", content=body, headers=slack_headers(body))
        assert answer.status_code == 200, answer.text
        await self.services.process.adapters["slack"].drain(10)  # type: ignore[attr-defined]
        return [r.json for r in self.world.slack.calls("response")
                if r.path.endswith(f"/{name}") and r.ok]

    async def slack_click(self, action: str, *, user: str = "U0USER01",
                          channel: str = SLACK_CHANNEL, trigger: str | None = None,
                          secret: str | None = None, message: str | None = None
                          ) -> tuple[httpx.Response, list[dict[str, Any]]]:
        """A signed `block_actions` click on a button whose value is `action` (same
        `trigger` twice: one click delivered twice; `secret`: signed with another), on
        the bot's message `message` (its ts) when given; returns Slack's answer to the
        request and the answers on its response_url."""
        name = uuid.uuid4().hex[:12]
        payload = self.payloads.button_click(
            action, channel_id=channel, user_id=user, trigger_id=trigger, message_ts=message,
            response_url=self.world.slack.response_url(
                name, clicked=None if message is None else (channel, message)))
        body = urlencode({"payload": json.dumps(payload)})
        headers = slack_headers(body) if secret is None else slack_headers(body, secret=secret)
        answer = await self.post("/slack/events", content=body, headers=headers)
        await self.services.process.adapters["slack"].drain(10)  # type: ignore[attr-defined]
        return answer, [r.json for r in self.world.slack.calls("response")
                        if r.path.endswith(f"/{name}") and r.ok]

    async def telegram(self, text: str, *, chat: dict[str, Any] | None = None
                       ) -> list[dict[str, str]]:
        """An update through the webhook with the secret token; returns what was sent."""
        self.update_ids[0] += 1
        update_id = self.update_ids[0]
        before, edited = len(self.world.telegram.sent()), len(self.world.telegram.edits())
        if not text.startswith("/"):
            text = f"@{self.world.telegram.username} {text}"  # a group message for the bot
        update = message_update(update_id, text, chat=chat or group_chat(int(TELEGRAM_CHAT)),
                                sender=telegram_user(), message_id=update_id)
        answer = await self.post("/telegram/webhook", json=update, headers={
            "X-Telegram-Bot-Api-Secret-Token": SECRETS["TELEGRAM_WEBHOOK_SECRET"]})
        assert answer.status_code == 200, answer.text
        return await self._telegram_answers(before, edited)

    async def telegram_click(self, action: str, *, query_id: str,
                             chat: dict[str, Any] | None = None,
                             sender: dict[str, Any] | None = None, message_id: int = 500,
                             secret: str | None = None, answered: bool = True
                             ) -> tuple[httpx.Response, list[dict[str, str]]]:
        """A click (`callback_query`) through the webhook with the secret token (or
        `secret`); returns the webhook's response and what was sent in answer (waiting
        for it - a message sent or the one clicked edited - when `answered`, else a
        moment in which nothing may come)."""
        self.update_ids[0] += 1
        before = len(self.world.telegram.sent())
        edited = len(self.world.telegram.edits())
        update = click_update(self.update_ids[0], action, query_id=query_id,
                              chat=chat or group_chat(int(TELEGRAM_CHAT)),
                              sender=sender or telegram_user(), message_id=message_id,
                              bot_id=self.world.telegram.bot_id)
        token = SECRETS["TELEGRAM_WEBHOOK_SECRET"] if secret is None else secret
        answer = await self.post("/telegram/webhook", json=update,
                                 headers={"X-Telegram-Bot-Api-Secret-Token": token})
        if answered and answer.status_code == 200:
            return answer, await self._telegram_answers(before, edited)
        await asyncio.sleep(0.5)
        return answer, self.world.telegram.sent()[before:]

    async def _telegram_answers(self, before: int, edited: int, quiet: float = 0.3,
                                timeout: float = 15.0) -> list[dict[str, str]]:
        """The messages sent past the first `before`, once something was sent or edited
        (past the first `edited` edits) and nothing more came for `quiet` seconds."""
        telegram = self.world.telegram

        def changes() -> tuple[int, int]:
            return len(telegram.sent()), len(telegram.edits())

        deadline = time.monotonic() + timeout
        while changes() == (before, edited):
            if time.monotonic() > deadline:
                raise AssertionError("no Telegram answer")
            await asyncio.sleep(0.02)
        count = None
        while count != changes():  # until the answer is complete
            count = changes()
            await asyncio.sleep(quiet)
        return telegram.sent()[before:]

    async def feishu(self, text: str, *, chat: str | None = None, chat_type: str = "group",
                     sender: str = "ou_alice") -> list[dict[str, Any]]:
        """An encrypted, signed @mention (`chat_type="p2p"`: a one-to-one chat); returns
        the cards sent in answer."""
        before = len(self.world.feishu.sent_cards())
        event = message_event(f"@_user_1 {text}", token=SECRETS["FEISHU_VERIFICATION_TOKEN"],
                              mentions=[bot_mention()], app_id=self.world.feishu_app_id,
                              chat_type=chat_type, sender_open_id=sender,
                              **({"chat_id": chat} if chat else {}))
        body = encrypt(SECRETS["FEISHU_ENCRYPT_KEY"], event)
        answer = await self.post("/feishu/events", content=body,
                                 headers=feishu_headers(body, SECRETS["FEISHU_ENCRYPT_KEY"]))
        assert answer.status_code == 200, answer.text
        await self.services.process.adapters["feishu"].wait_idle(15)  # type: ignore[attr-defined]
        return [c.card for c in self.world.feishu.sent_cards()[before:]]

    async def feishu_click(self, action: str, *, event_id: str, chat: str | None = None,
                           sender: str = "ou_alice", message_id: str = "om_card_1",
                           token: str | None = None, key: str | None = None,
                           sign_key: str | None = None
                           ) -> tuple[httpx.Response, list[dict[str, Any]]]:
        """A click on a card button (`card.action.trigger`), encrypted and signed as
        Feishu does (`token`, `key`, `sign_key`: another verification token, encrypt
        key or signing key); returns the callback's response and the cards sent."""
        before = len(self.world.feishu.sent_cards())
        event = card_action_event(
            action, token=token or SECRETS["FEISHU_VERIFICATION_TOKEN"], event_id=event_id,
            message_id=message_id, operator_open_id=sender, app_id=self.world.feishu_app_id,
            **({"chat_id": chat} if chat else {}))
        body = encrypt(key or SECRETS["FEISHU_ENCRYPT_KEY"], event)
        answer = await self.post("/feishu/events", content=body, headers=feishu_headers(
            body, sign_key or SECRETS["FEISHU_ENCRYPT_KEY"]))
        await self.services.process.adapters["feishu"].wait_idle(15)  # type: ignore[attr-defined]
        return answer, [c.card for c in self.world.feishu.sent_cards()[before:]]

    async def github(self, payload: dict[str, Any], *, delivery: str | None = None,
                     event: str = "pull_request") -> httpx.Response:
        body = json.dumps(payload).encode()
        return await self.post("/github/webhook", content=body, headers={
            "Content-Type": "application/json", "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or uuid.uuid4().hex,
            "X-Hub-Signature-256": sign(body, SECRETS["GITHUB_WEBHOOK_SECRET"])})


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """Exactly these platform, GitHub and Redis variables while the block runs."""
    saved = {name: os.environ.get(name) for name in (*PLATFORM_ENV, *values)}
    for name in PLATFORM_ENV:
        os.environ.pop(name, None)
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def capturing_logs() -> Iterator[LogCapture]:
    """Every record of every logger (the root and every library), DEBUG and up."""
    capture = LogCapture()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    try:
        yield capture
    finally:
        root.removeHandler(capture)
        root.setLevel(previous)


@contextlib.asynccontextmanager
async def service_in_process(world: World, redis_url: str, workdir: Path, *,
                             urls: Urls | None = None, **config: Any
                             ) -> AsyncIterator[Service]:
    """The whole service in-process: every platform configured against its fake (or
    `urls`), the GitHub source against the fake GitHub with its waits recorded, not
    slept, and Redis at `redis_url`."""
    with environment(world.env(redis_url)):
        settings = write_config(workdir / "prdigest.toml", urls or world.urls(), **config)
        app = create_app(settings, redis_url=redis_url, clock=clock(), background=False)
        services: Services = app.state.services
        assert isinstance(services.process.github, GitHubSource)  # one token
        # The service's clock holds the world's date; the fake GitHub's reset times are
        # real epoch seconds: GitHub's waits go on a virtual clock at the real time,
        # passing at once and recorded.
        github_clock = VirtualClock(datetime.now(UTC))
        github = services.process.github
        github.clock = github.policy.clock = github.budget.clock = github_clock
        github.lookups.clock = github_clock
        # ... and the fake GitHub tells its reset times by that clock: a reset 20 s off
        # is waited for 20 s, however far earlier waits moved the clock.
        world.github.now = lambda: github_clock.now().timestamp()
        async with serving(app) as http:
            yield Service(http=http, services=services, world=world,
                          sleeps=github_clock.slept)
