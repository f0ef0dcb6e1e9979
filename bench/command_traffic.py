"""What the chat-command benchmark sends and hears: each platform's signed webhook
request for `risks for #N`, and the fakes that report the moment a reply arrives.

Used by bench.commands; kept apart so the measuring loop reads on its own.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlencode

from aiohttp import web

from testkit.fakes.feishu import FakeFeishu, bot_mention, encrypt, message_event
from testkit.fakes.feishu import signed_headers as feishu_signed_headers
from testkit.fakes.slack import FakeSlack
from testkit.fakes.slack_payloads import SlackPayloads
from testkit.fakes.slack_payloads import signed_headers as slack_signed_headers
from testkit.fakes.telegram import FakeTelegram, RecordedRequest, group_chat, message_update

ECHO_PATH = "/bench/echo"
# The example config's channels (examples/prdigest.toml).
SLACK_CHANNEL = "C0123456"
TELEGRAM_CHAT = -1001234567890
FEISHU_CHAT = "oc_0123456789abcdef"


# --- replies arriving at the fakes ---------------------------------------------------------


class Arrivals:
    """Reply arrival times by request key, from the fakes into the client.

    The time is taken the moment a fake has accepted the reply, so the client's
    scheduling does not add to the round trip. The fakes are served by the client's own
    loop (nothing in this process blocks it), so no reply costs a thread handoff.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: dict[str, asyncio.Future[float]] = {}
        self.lock = threading.Lock()
        self.unexpected = 0

    def expect(self, key: str) -> asyncio.Future[float]:
        future: asyncio.Future[float] = self.loop.create_future()
        with self.lock:
            self.waiting[key] = future
        return future

    def forget(self, key: str) -> None:
        with self.lock:
            self.waiting.pop(key, None)

    def arrived(self, key: str) -> None:
        at = time.perf_counter()
        with self.lock:
            future = self.waiting.pop(key, None)
            if future is None:
                self.unexpected += 1
                return
        try:
            here = asyncio.get_running_loop() is self.loop
        except RuntimeError:
            here = False
        if here:
            _resolve(future, at)
        else:
            self.loop.call_soon_threadsafe(_resolve, future, at)


def _resolve(future: asyncio.Future[float], at: float) -> None:
    if not future.done():
        future.set_result(at)


class BenchSlack(FakeSlack):
    """The fake Slack, reporting each answer its response_urls accept."""

    def __init__(self, arrivals: Arrivals, **options: Any) -> None:
        super().__init__(**options)
        self.arrivals = arrivals

    def _record(self, request: web.Request, body: bytes, status: int, ok: bool) -> None:
        super()._record(request, body, status, ok)
        if ok and request.path.startswith("/response/"):
            self.arrivals.arrived("slack:" + request.path.rsplit("/", 1)[1])


class BenchTelegram(FakeTelegram):
    """The fake Bot API, reporting each accepted sendMessage by the message it answers."""

    def __init__(self, arrivals: Arrivals, token: str) -> None:
        super().__init__(token)
        self.arrivals = arrivals

    def _answer(self, request: RecordedRequest) -> tuple[int, dict[str, Any]]:
        status, answer = super()._answer(request)
        if request.method == "sendMessage" and status == 200:
            replied = json.loads(request.fields.get("reply_parameters", "{}"))
            self.arrivals.arrived(f"telegram:{replied.get('message_id')}")
        return status, answer


_FEISHU_REPLY = re.compile(r"/open-apis/im/v1/messages/([^/?]+)/reply")


class BenchFeishu(FakeFeishu):
    """The fake Open API, reporting each accepted reply by the message it answers."""

    arrivals: Arrivals | None = None

    def _respond(self, handler: web.Request, status: int, body: dict[str, Any],
                 headers: dict[str, str] | None = None) -> None:
        match = _FEISHU_REPLY.match(handler.path)
        if status == 200 and match and self.arrivals is not None:
            self.arrivals.arrived(f"feishu:{match[1]}")
        super()._respond(handler, status, body, headers)


# --- the requests, as each platform sends them ---------------------------------------------


@dataclass(frozen=True)
class Outbound:
    """One webhook request, and the key its reply will arrive under (None: the HTTP
    response itself is the reply)."""

    key: str | None
    body: bytes
    headers: dict[str, str]


class Traffic(Protocol):
    name: str
    path: str

    def request(self, ident: int, number: int) -> Outbound: ...


@dataclass(frozen=True)
class Secrets:
    """Test secrets for one run, made up here and given only to the child process."""

    slack_bot_token: str = field(default_factory=lambda: "xoxb-" + secrets.token_hex(12))
    slack_signing_secret: str = field(default_factory=lambda: secrets.token_hex(16))
    telegram_token: str = field(default_factory=lambda: "123456:" + secrets.token_urlsafe(24))
    telegram_secret: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    feishu_app_id: str = field(default_factory=lambda: "cli_" + secrets.token_hex(8))
    feishu_app_secret: str = field(default_factory=lambda: secrets.token_hex(16))
    feishu_token: str = field(default_factory=lambda: secrets.token_hex(16))
    feishu_encrypt_key: str = field(default_factory=lambda: secrets.token_hex(16))

    def environment(self) -> dict[str, str]:
        """The env vars examples/prdigest.toml names, set to these values."""
        return {
            "SLACK_BOT_TOKEN": self.slack_bot_token,
            "SLACK_SIGNING_SECRET": self.slack_signing_secret,
            "TELEGRAM_BOT_TOKEN": self.telegram_token,
            "TELEGRAM_WEBHOOK_SECRET": self.telegram_secret,
            "FEISHU_APP_ID": self.feishu_app_id,
            "FEISHU_APP_SECRET": self.feishu_app_secret,
            "FEISHU_VERIFICATION_TOKEN": self.feishu_token,
            "FEISHU_ENCRYPT_KEY": self.feishu_encrypt_key,
        }


class SlackTraffic:
    """`/prdigest risks for #N`, form-encoded and v0-signed; answered on its own
    response_url on the fake."""

    name = "slack"
    path = "/slack/events"

    def __init__(self, fake: FakeSlack, keys: Secrets) -> None:
        self.fake = fake
        self.keys = keys
        self.payloads = SlackPayloads()

    def request(self, ident: int, number: int) -> Outbound:
        name = f"b{ident}"
        payload = self.payloads.slash_command(f"risks for #{number}", channel_id=SLACK_CHANNEL,
                                              response_url=self.fake.response_url(name))
        body = urlencode(payload)
        return Outbound(key=f"slack:{name}", body=body.encode(),
                        headers=slack_signed_headers(body, secret=self.keys.slack_signing_secret))


class TelegramTraffic:
    """`@bot risks for #N` in the configured group, with the secret-token header;
    answered with a sendMessage replying to that message."""

    name = "telegram"
    path = "/telegram/webhook"

    def __init__(self, fake: FakeTelegram, keys: Secrets) -> None:
        self.fake = fake
        self.keys = keys

    def request(self, ident: int, number: int) -> Outbound:
        update = message_update(ident, f"@{self.fake.username} risks for #{number}",
                                chat=group_chat(TELEGRAM_CHAT), message_id=ident)
        return Outbound(key=f"telegram:{ident}", body=json.dumps(update).encode(),
                        headers={"Content-Type": "application/json",
                                 "X-Telegram-Bot-Api-Secret-Token": self.keys.telegram_secret})


class FeishuTraffic:
    """An @mention `risks for #N` in the configured group, AES-encrypted and signed;
    answered with a reply card under that message."""

    name = "feishu"
    path = "/feishu/events"

    def __init__(self, fake: FakeFeishu, keys: Secrets) -> None:
        self.fake = fake
        self.keys = keys

    def request(self, ident: int, number: int) -> Outbound:
        message_id = f"om_bench_{ident}"
        event = message_event(f"@_user_1 risks for #{number}", token=self.keys.feishu_token,
                              event_id=f"ev_bench_{ident}", chat_id=FEISHU_CHAT,
                              message_id=message_id, mentions=[bot_mention()],
                              app_id=self.keys.feishu_app_id)
        body = encrypt(self.keys.feishu_encrypt_key, event)
        headers = feishu_signed_headers(body, self.keys.feishu_encrypt_key, nonce=f"n{ident}")
        return Outbound(key=f"feishu:{message_id}", body=body, headers=headers)


class EchoTraffic:
    """The ceiling: a body the size of a Slack slash command, sent back as it came."""

    name = "echo"
    path = ECHO_PATH

    def __init__(self, sample: Outbound) -> None:
        self.body = sample.body
        self.content_type = sample.headers.get("Content-Type", "text/plain")

    def request(self, ident: int, number: int) -> Outbound:
        return Outbound(key=None, body=self.body, headers={"Content-Type": self.content_type})
