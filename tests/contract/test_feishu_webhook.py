"""The Feishu webhook end to end: real signatures and encryption in, the real lark-oapi
client out to a fake Feishu, and exactly what Feishu received checked.

Requests are built as Feishu builds them (AES-256-CBC body, sha256 signature over
timestamp + nonce + encrypt key + body) and go through the Starlette route in process;
answers leave through lark-oapi to `FakeFeishu`, which runs in its own thread because
the SDK fetches its token synchronously. Every test has its own app id: the SDK keeps
tokens in a process-wide cache keyed by app id only.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
import pytest
from starlette.applications import Starlette

from adapters.feishu.adapter import FeishuAdapter
from adapters.feishu.render import card_content, reply_cards
from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import ChannelConfig, Config, load_config
from bot.digests import Digests
from bot.models import Command, Reply
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.claims import Claims
from bot.store.keys import Keys
from bot.store.memory import MemoryCoordination
from testkit import EXAMPLES
from testkit.clock import VirtualClock
from testkit.coordination import claims_on, local_claims
from testkit.fakes.feishu import (
    BOT_INFO_PATH,
    FakeFeishu,
    bot_mention,
    encrypt,
    message_event,
    signed_headers,
)
from testkit.feishu_bot import feishu_adapter

TOKEN = "verification-token-value"
ENCRYPT_KEY = "encrypt-key-value"
APP_SECRET = "app-secret-value"
CHAT = "oc_0123456789abcdef"  # the Feishu channel of examples/prdigest.toml
CONFIG = load_config(EXAMPLES / "prdigest.toml")
SNAPSHOT = read_snapshot(EXAMPLES / "snapshot.json")


def example_handler() -> CommandHandler:
    return CommandHandler(Digests(CONFIG, SnapshotSource(SNAPSHOT),
                                  clock=HeldClock(datetime(2026, 7, 17, 8, tzinfo=UTC))))


class RecordingHandler:
    """A handler that records what it was asked and can be held or made to fail."""

    def __init__(self, *, gate: asyncio.Event | None = None, fail: bool = False) -> None:
        self.asked: list[tuple[Command, ChannelConfig | None, str | None]] = []
        self.gate = gate
        self.fail = fail

    async def chat_channel(self, chat: str) -> ChannelConfig | None:
        return CONFIG.channel(chat)

    async def handle(self, command: Command, *, channel: ChannelConfig | None,
                     user: str | None = None, asker: Any = None) -> Reply:
        self.asked.append((command, channel, user))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise RuntimeError("handler bug")
        return Reply(kind="help", lang=command.lang)


@pytest.fixture
def fake() -> Iterator[FakeFeishu]:
    with FakeFeishu(app_id=f"cli_{uuid.uuid4().hex[:16]}", app_secret=APP_SECRET) as server:
        yield server


@dataclass
class Bot:
    adapter: FeishuAdapter
    http: httpx.AsyncClient

    async def deliver(self, event: dict[str, Any], *, encrypt_key: str | None = ENCRYPT_KEY,
                      timestamp: int | None = None) -> httpx.Response:
        """Post an event the way Feishu does."""
        if encrypt_key:
            body = encrypt(encrypt_key, event)
            headers = signed_headers(body, encrypt_key, timestamp=timestamp)
        else:
            body = json.dumps(event).encode()
            headers = {"Content-Type": "application/json"}
        return await self.http.post("/feishu/events", content=body, headers=headers)


@asynccontextmanager
async def feishu_bot(fake: FakeFeishu, *, handler: Any = None, deduper: Claims | None = None,
                     config: Config = CONFIG, **options: Any) -> AsyncIterator[Bot]:
    settings: dict[str, Any] = {"verification_token": TOKEN, "encrypt_key": ENCRYPT_KEY,
                                "domain": fake.base_url}
    settings.update(options)
    adapter = feishu_adapter(config, handler or example_handler(), deduper or local_claims(),
                             app_id=fake.app_id, app_secret=fake.app_secret, **settings)
    await adapter.start()
    app = Starlette(routes=adapter.routes())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://bot.example") as http:
        yield Bot(adapter, http)
    await adapter.close()


def asked(text: str, **changes: Any) -> dict[str, Any]:
    return message_event(f"@_user_1 {text}", token=TOKEN, mentions=[bot_mention()],
                         app_id="cli", **changes)


# --- answering -----------------------------------------------------------------------


async def test_a_mention_is_answered_with_the_card_feishu_receives(fake: FakeFeishu) -> None:
    async with feishu_bot(fake) as bot:
        response = await bot.deliver(asked("#1201 有什么风险", event_id="ev-risks"))
        assert response.status_code == 200 and response.json() == {"msg": "success"}
        await bot.adapter.wait_idle()
    (sent,) = fake.sent_cards()
    # Exactly the card the handler's reply renders to, sent as a reply to the question.
    command = parse_command("#1201 有什么风险", default_lang="zh")
    reply = await example_handler().handle(command, channel=CONFIG.channel(f"feishu:{CHAT}"),
                                           user="ou_alice")
    (expected,) = reply_cards(reply)
    assert (sent.endpoint, sent.target) == ("reply", "om_question_1")
    assert sent.content == card_content(expected)
    body = sent.request.json()
    assert body == {"content": sent.content, "msg_type": "interactive", "uuid": sent.uuid}
    assert sent.uuid and len(sent.uuid) <= 50
    assert sent.card["header"]["title"]["content"] == "PR #1201 的风险"
    assert sent.card["header"]["template"] == "red"
    assert sent.request.headers["authorization"] == f"Bearer {fake.tokens[0]}"
    assert APP_SECRET not in sent.content


async def test_the_route_answers_at_once_and_the_reply_follows(fake: FakeFeishu) -> None:
    """Feishu re-delivers unless it gets 200 within 3 s; the work happens after."""
    gate = asyncio.Event()
    handler = RecordingHandler(gate=gate)
    async with feishu_bot(fake, handler=handler) as bot:
        # The answer is held until the gate opens: a route that waited for it would never
        # answer (the limit only bounds that hang; speed is the benchmarks' to measure).
        response = await asyncio.wait_for(bot.deliver(asked("digest")), timeout=30)
        assert response.status_code == 200
        async with asyncio.timeout(30):
            while not handler.asked:
                await asyncio.sleep(0.01)
        assert fake.sent_cards() == []
        gate.set()
        await bot.adapter.wait_idle()
    assert len(fake.sent_cards()) == 1


async def test_a_redelivered_event_is_answered_once_across_replicas(
        fake: FakeFeishu, port: MemoryCoordination) -> None:
    handler = RecordingHandler()
    event = asked("digest", event_id="ev-retried")
    async with feishu_bot(fake, handler=handler, deduper=claims_on(port)) as one, \
            feishu_bot(fake, handler=handler, deduper=claims_on(port)) as two:
        for bot in (one, two, one):  # Feishu re-sends after an answer it missed
            assert (await bot.deliver(event)).status_code == 200
            await bot.adapter.wait_idle()
    assert len(handler.asked) == 1
    assert len(fake.sent_cards()) == 1
    assert await port.claims.exists("prdigest:v2:seen:feishu:ev-retried")


async def test_an_event_a_dead_replica_began_is_asked_for_again_then_answered_once(
        fake: FakeFeishu, port: MemoryCoordination) -> None:
    dead = claims_on(port, alive_seconds=0.3)  # SIGKILLed while answering
    assert await dead.begin(Keys.seen("feishu", "ev-crash"), dead.seen_ttl_seconds)
    handler = RecordingHandler()
    event = asked("digest", event_id="ev-crash")
    async with feishu_bot(fake, handler=handler, deduper=claims_on(port)) as bot:
        early = await bot.deliver(event)  # its alive mark still stands
        port.clock.advance(0.5)  # nothing renews it: it lapses
        statuses = []
        for _ in range(2):
            statuses.append((await bot.deliver(event)).status_code)
            await bot.adapter.wait_idle()
    assert early.status_code == 503 and int(early.headers["retry-after"]) > 0
    assert statuses == [200, 200]
    assert len(handler.asked) == 1 and len(fake.sent_cards()) == 1


async def test_the_handler_gets_the_channel_user_and_words(fake: FakeFeishu) -> None:
    handler = RecordingHandler()
    async with feishu_bot(fake, handler=handler) as bot:
        await bot.deliver(asked("订阅 npu rollout"))
        await bot.deliver(message_event("topics", token=TOKEN, chat_type="p2p",
                                        chat_id="oc_direct", sender_open_id="ou_bob"))
        await bot.adapter.wait_idle()
    (group, channel, user), (direct, no_channel, bob) = handler.asked
    assert (group.kind, group.topics, group.lang, user) == (
        "subscribe", ("npu", "rollout"), "zh", "ou_alice")
    assert channel is not None and channel.key == f"feishu:{CHAT}"
    assert (direct.kind, no_channel, bob) == ("topics", None, "ou_bob")


async def test_a_group_message_without_the_bot_gets_no_answer(fake: FakeFeishu) -> None:
    handler = RecordingHandler()
    async with feishu_bot(fake, handler=handler) as bot:
        other = {"key": "@_user_1", "id": {"open_id": "ou_bob"}, "name": "Bob"}
        response = await bot.deliver(message_event("@_user_1 digest", token=TOKEN,
                                                   mentions=[other]))
        assert response.status_code == 200
        await bot.adapter.wait_idle()
    assert handler.asked == [] and fake.sent_cards() == []


async def test_text_outside_the_grammar_gets_help_with_the_text_made_inert(
        fake: FakeFeishu) -> None:
    async with feishu_bot(fake) as bot:
        await bot.deliver(asked('<at id=all></at> <at user_id="all">x</at> **hello**'))
        await bot.adapter.wait_idle()
    (sent,) = fake.sent_cards()
    assert sent.card["header"]["template"] == "blue"
    text = sent.markdown()
    assert "<at" not in text and "**hello**" not in text
    assert "&#60;at id=all&#62;&#60;/at&#62;" in text


async def test_a_failing_handler_still_gets_the_user_an_answer(fake: FakeFeishu) -> None:
    async with feishu_bot(fake, handler=RecordingHandler(fail=True)) as bot:
        assert (await bot.deliver(asked("digest"))).status_code == 200
        await bot.adapter.wait_idle()
    (sent,) = fake.sent_cards()
    assert sent.card["header"]["template"] == "grey"
    assert "Traceback" not in sent.content and "handler bug" not in sent.content


async def test_a_refused_reply_is_logged_and_the_route_stays_calm(
        fake: FakeFeishu, caplog: pytest.LogCaptureFixture) -> None:
    fake.fail_next("/reply", status=400, body={"code": 230011, "msg": "message recalled"})
    async with feishu_bot(fake) as bot:
        assert (await bot.deliver(asked("help"))).status_code == 200
        await bot.adapter.wait_idle()
    assert "230011" in caplog.text and fake.sent_cards() == []


async def test_events_without_encryption_need_only_the_token(fake: FakeFeishu) -> None:
    async with feishu_bot(fake, encrypt_key=None) as bot:
        response = await bot.deliver(asked("help"), encrypt_key=None)
        assert response.status_code == 200
        forged = asked("help")
        forged["header"]["token"] = "guessed"
        assert (await bot.deliver(forged, encrypt_key=None)).status_code == 401
        await bot.adapter.wait_idle()
    assert len(fake.sent_cards()) == 1


# --- url verification ------------------------------------------------------------------


@pytest.mark.parametrize("encrypted", [True, False])
async def test_the_url_verification_challenge_is_answered(fake: FakeFeishu,
                                                          encrypted: bool) -> None:
    challenge = {"challenge": "c-123", "token": TOKEN, "type": "url_verification"}
    async with feishu_bot(fake, encrypt_key=ENCRYPT_KEY if encrypted else None) as bot:
        response = await bot.deliver(challenge, encrypt_key=ENCRYPT_KEY if encrypted else None)
        assert (response.status_code, response.json()) == (200, {"challenge": "c-123"})
        forged = {**challenge, "token": "guessed"}
        response = await bot.deliver(forged, encrypt_key=ENCRYPT_KEY if encrypted else None)
        assert response.status_code == 401 and "c-123" not in response.text


async def test_the_bots_identity_is_asked_again_five_minutes_after_it_failed(
        fake: FakeFeishu) -> None:
    """Feishu down at start: the events meanwhile are answered without the bot's
    identity and do not each ask for it again; five minutes later, on the adapter's
    clock, the next one does."""
    fake.fail_next(BOT_INFO_PATH, status=500, body={"code": 1000, "msg": "unavailable"})
    clock = VirtualClock()
    handler = RecordingHandler()
    async with feishu_bot(fake, handler=handler, clock=clock) as bot:
        await bot.adapter.wait_idle()  # the lookup `start` began, refused
        await bot.deliver(asked("digest", event_id="ev-early"))
        await bot.adapter.wait_idle()
        early = (len(fake.calls(BOT_INFO_PATH)), bot.adapter.status()["bot_identity_known"])
        clock.advance(299)
        await bot.deliver(asked("digest", event_id="ev-still"))
        await bot.adapter.wait_idle()
        still = len(fake.calls(BOT_INFO_PATH))
        clock.advance(1)
        await bot.deliver(asked("digest", event_id="ev-later"))
        await bot.adapter.wait_idle()
        later = (len(fake.calls(BOT_INFO_PATH)), bot.adapter.status()["bot_identity_known"])
    assert early == (1, False) and still == 1 and later == (2, True)
    assert len(handler.asked) == 3


# --- bad input: 4xx, and nothing happens -------------------------------------------------


def _signed(event: dict[str, Any], **changes: Any) -> tuple[bytes, dict[str, str]]:
    body = encrypt(ENCRYPT_KEY, event)
    return body, signed_headers(body, ENCRYPT_KEY, **changes)


def _forged(case: str) -> tuple[bytes, dict[str, str]]:
    event = asked("digest")
    now = int(time.time())
    if case == "bad signature":
        body, headers = _signed(event)
        return body, {**headers, "X-Lark-Signature": "0" * 64}
    if case == "stale timestamp":
        return _signed(event, timestamp=now - 301)
    if case == "future timestamp":
        return _signed(event, timestamp=now + 400)
    if case == "timestamp not a number":
        body = encrypt(ENCRYPT_KEY, event)
        headers = signed_headers(body, ENCRYPT_KEY)
        from testkit.fakes.feishu import signature

        return body, {**headers, "X-Lark-Request-Timestamp": "soon",
                      "X-Lark-Signature": signature("soon", "nonce-1", ENCRYPT_KEY, body)}
    if case == "no signature headers":
        return encrypt(ENCRYPT_KEY, event), {"Content-Type": "application/json"}
    if case == "signed with another key":
        body = encrypt(ENCRYPT_KEY, event)
        return body, signed_headers(body, "another-key")
    if case == "encrypted with another key":
        body = encrypt("another-key", event)
        return body, signed_headers(body, ENCRYPT_KEY)
    if case == "body changed after signing":
        body, headers = _signed(event)
        return encrypt(ENCRYPT_KEY, asked("risks #1201")), headers
    if case == "wrong verification token":
        return _signed({**event, "header": {**event["header"], "token": "guessed"}})
    if case == "plain body while encryption is on":
        body = json.dumps(event).encode()
        return body, signed_headers(body, "")
    raise AssertionError(case)


FORGED = ["bad signature", "stale timestamp", "future timestamp", "timestamp not a number",
          "no signature headers", "signed with another key", "encrypted with another key",
          "body changed after signing", "wrong verification token",
          "plain body while encryption is on"]


@pytest.mark.parametrize("case", FORGED)
async def test_forged_or_stale_events_get_401_and_cause_nothing(fake: FakeFeishu,
                                                                case: str) -> None:
    handler = RecordingHandler()
    async with feishu_bot(fake, handler=handler) as bot:
        body, headers = _forged(case)
        response = await bot.http.post("/feishu/events", content=body, headers=headers)
        await bot.adapter.wait_idle()
    assert (response.status_code, response.json()) == (401, {"msg": "unauthorized"})
    assert handler.asked == []
    assert fake.calls("/open-apis/im") == []
    assert ENCRYPT_KEY not in response.text and TOKEN not in response.text


@pytest.mark.parametrize(
    ("body", "status"),
    [(b"not json", 400), (b"[1, 2]", 400), (b"", 400), (b'"text"', 400),
     (b"{" + b" " * (1024 * 1024) + b"}", 413)],
)
async def test_malformed_requests_get_4xx(fake: FakeFeishu, body: bytes, status: int) -> None:
    async with feishu_bot(fake) as bot:
        response = await bot.http.post("/feishu/events", content=body,
                                       headers={"Content-Type": "application/json"})
    assert response.status_code == status


async def test_an_authentic_event_of_another_kind_is_acknowledged_and_ignored(
        fake: FakeFeishu) -> None:
    event = asked("digest")
    event["header"]["event_type"] = "im.chat.member.bot.added_v1"
    handler = RecordingHandler()
    async with feishu_bot(fake, handler=handler) as bot:
        response = await bot.deliver(event)
        await bot.adapter.wait_idle()
    assert (response.status_code, response.json()) == (200, {"msg": "ignored"})
    assert handler.asked == [] and fake.sent_cards() == []


async def test_only_post_is_routed(fake: FakeFeishu) -> None:
    async with feishu_bot(fake) as bot:
        assert (await bot.http.get("/feishu/events")).status_code == 405


async def test_a_forged_request_is_one_log_line_not_a_traceback(
        fake: FakeFeishu, caplog: pytest.LogCaptureFixture) -> None:
    async with feishu_bot(fake) as bot:
        body, headers = _forged("bad signature")
        with caplog.at_level("WARNING"):
            await bot.http.post("/feishu/events", content=body, headers=headers)
    records = [r for r in caplog.records if "event refused" in r.getMessage()]
    assert records and all(r.exc_info is None and r.levelname == "WARNING" for r in records)
    assert "Traceback" not in caplog.text and ENCRYPT_KEY not in caplog.text


async def test_a_hostile_pr_title_reaches_feishu_as_inert_text(fake: FakeFeishu) -> None:
    title = 'fix: <at user_id="all">everyone</at> <at id=all></at> [x](javascript:alert(1))'
    hostile = msgspec.structs.replace(SNAPSHOT.pulls[0], number=4242, title=title,
                                      url="https://github.com/acme/lumen/pull/4242")
    snapshot = msgspec.structs.replace(SNAPSHOT, pulls=(*SNAPSHOT.pulls, hostile))
    handler = CommandHandler(Digests(CONFIG, SnapshotSource(snapshot),
                                     clock=HeldClock(datetime(2026, 7, 17, 8, tzinfo=UTC))))
    async with feishu_bot(fake, handler=handler) as bot:
        await bot.deliver(asked("summary #4242"))
        await bot.adapter.wait_idle()
    (sent,) = fake.sent_cards()
    received = sent.request.json()["content"]  # the card JSON exactly as sent
    shown = sent.markdown()  # its markdown, decoded from that JSON
    assert '&#60;at user&#95;id="all"&#62;everyone&#60;/at&#62;' in shown
    assert "&#60;at id=all&#62;&#60;/at&#62;" in shown
    assert "<at" not in received and "](javascript" not in received
