"""Posting to Feishu through the real lark-oapi client and a fake Open API: what
arrived, byte for byte; split digests; idempotency keys; rate limits; refusals; and
building the adapter from the config and environment.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
import pytest_asyncio
from lark_oapi.api.im.v1 import (
    ReplyMessageRequest,
    ReplyMessageRequestBody,
    ReplyMessageResponse,
)

from adapters.base import DeliveryError
from adapters.feishu import payloads as feishu_payloads
from adapters.feishu import settings as feishu_settings
from adapters.feishu.adapter import FEISHU_LIMITS, FeishuAdapter
from adapters.feishu.render import (
    MAX_REQUEST_BYTES,
    Card,
    card_content,
    digest_cards,
    request_bytes,
)
from adapters.feishu.tokens import TENANT_TOKENS
from adapters.feishu.transport import FeishuTransport
from bot.clock import SYSTEM_CLOCK
from bot.config import load_config
from bot.engine import build_digest
from bot.models import Counts, Digest, KeyPull, Period, Reply, Risk
from bot.snapshot import read_snapshot
from bot.store.ledger import Slot
from testkit import EXAMPLES
from testkit.clock import VirtualClock
from testkit.coordination import local_claims
from testkit.fakes.feishu import MESSAGES_PATH, TOKEN_PATH, FakeFeishu
from testkit.feishu_bot import feishu_adapter

APP_SECRET = "app-secret-value"
CHAT = "oc_0123456789abcdef"
# The key the schedule gives the first delivery of W29 to CHAT.
KEY = Slot("2026-W29", f"feishu:{CHAT}", "acme/lumen").delivery_key()
CONFIG = load_config(EXAMPLES / "prdigest.toml")


class NoHandler:
    async def chat_channel(self, chat: str) -> None:
        return None

    async def handle(self, *args: Any, **kwargs: Any) -> Reply:
        raise AssertionError("nothing is asked in these tests")


@pytest.fixture
def fake() -> Iterator[FakeFeishu]:
    with FakeFeishu(app_id=f"cli_{uuid.uuid4().hex[:16]}", app_secret=APP_SECRET) as server:
        yield server


_OPEN: list[FeishuAdapter] = []


@pytest_asyncio.fixture(autouse=True, loop_scope="function")
async def _close_adapters() -> AsyncIterator[None]:
    """Each test's adapters are closed in its own loop (their connection pools with them)."""
    yield
    while _OPEN:
        await _OPEN.pop().close()


def adapter_for(fake: FakeFeishu, **options: Any) -> FeishuAdapter:
    """An adapter on the fake whose turns, hold-offs and back-offs pass on a virtual
    clock (its `clock`, when given one)."""
    settings: dict[str, Any] = {"verification_token": "v", "encrypt_key": "e",
                                "domain": fake.base_url, "bot_open_id": "ou_fake_bot",
                                "clock": VirtualClock()}
    settings.update(options)
    adapter = feishu_adapter(CONFIG, NoHandler(), local_claims(), app_id=fake.app_id,
                             app_secret=fake.app_secret, **settings)
    _OPEN.append(adapter)
    return adapter


def example_digest() -> Digest:
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    return build_digest(snapshot, "2026-W29", repo_config=CONFIG.repo("acme/lumen"), lang="zh")


def long_digest() -> Digest:
    quote = "评审意见：逐字引用，说明合并时仍未解决的问题。" * 4
    return msgspec.structs.replace(
        example_digest(),
        risks=tuple(Risk(pull=n, severity="high", summary=quote,
                         evidence_url=f"https://github.com/acme/lumen/pull/{n}")
                    for n in range(1, 300)),
    )


async def test_a_digest_arrives_as_the_card_it_renders_to(fake: FakeFeishu) -> None:
    digest = example_digest()
    ids = await adapter_for(fake).post_digest(CHAT, digest, idempotency_key=KEY)
    (sent,) = fake.sent_cards()
    (card,) = digest_cards(digest)
    assert ids == ["om_fake_1"]
    assert (sent.endpoint, sent.target, sent.receive_id_type) == ("create", CHAT, "chat_id")
    assert sent.content == card_content(card)
    assert sent.request.json() == {"receive_id": CHAT, "msg_type": "interactive",
                                   "content": sent.content, "uuid": sent.uuid}
    # The renderer's measure is the body the SDK sends, with room for longer ids.
    assert sent.uuid is not None
    slack = (64 - len(CHAT)) + (50 - len(sent.uuid))
    assert len(sent.request.body) == request_bytes(card) - slack
    (token_call,) = fake.calls(TOKEN_PATH)
    assert token_call.json() == {"app_id": fake.app_id, "app_secret": APP_SECRET}
    assert sent.request.headers["authorization"] == f"Bearer {fake.tokens[0]}"


SMALL_CARDS = 2500  # a card size under which the long digest's chat form takes several


async def test_a_long_digest_arrives_as_one_card_of_its_chat_form(fake: FakeFeishu) -> None:
    digest = long_digest()
    await adapter_for(fake).post_digest(CHAT, digest)
    assert [s.card for s in fake.sent_cards()] == digest_cards(digest)
    assert len(fake.sent_cards()) == 1


async def test_a_digest_in_several_cards_arrives_in_order(
        fake: FakeFeishu, monkeypatch: pytest.MonkeyPatch) -> None:
    digest = long_digest()

    def small(weekly: Digest, **_: object) -> list[Card]:
        return digest_cards(weekly, limit=SMALL_CARDS)

    monkeypatch.setattr(feishu_payloads, "digest_cards", small)
    ids = await adapter_for(fake).post_digest(CHAT, digest, idempotency_key=KEY)
    sent = fake.sent_cards()
    assert len(ids) == len(sent) == len(small(digest)) > 1
    assert [s.card for s in sent] == small(digest)
    assert all(len(s.request.body) <= MAX_REQUEST_BYTES for s in sent)
    assert len({s.uuid for s in sent}) == len(sent)


async def test_posting_again_reuses_the_idempotency_keys(fake: FakeFeishu) -> None:
    """Feishu drops a message whose uuid it saw within the hour, so a replica that
    retries a half-posted digest (the same delivery key) does not post it twice; another
    delivery, or a digest posted without a key, shares no uuid with it."""
    adapter = adapter_for(fake)
    other = Slot("2026-W29", "feishu:oc_other", "acme/lumen").delivery_key()
    await adapter.post_digest(CHAT, example_digest(), idempotency_key=KEY)
    await adapter.post_digest(CHAT, example_digest(), idempotency_key=KEY)
    await adapter.post_digest("oc_other", example_digest(), idempotency_key=other)
    await adapter.post_digest(CHAT, example_digest())
    first, again, elsewhere, unkeyed = (s.uuid for s in fake.sent_cards())
    assert first == again != elsewhere
    assert first is not None and elsewhere is not None and unkeyed is None


async def test_a_rate_limit_is_waited_out_and_retried(fake: FakeFeishu) -> None:
    fake.fail_next(MESSAGES_PATH, status=429, body={"code": 99991400, "msg": "too many"},
                   headers={"x-ogw-ratelimit-reset": "3"})
    clock = VirtualClock()
    started = clock.monotonic()
    ids = await adapter_for(fake, clock=clock).post_digest(CHAT, example_digest())
    attempts = [r for r in fake.calls(MESSAGES_PATH) if r.method == "POST"]
    assert len(attempts) == 2 and len(ids) == 1
    assert attempts[0].body == attempts[1].body  # same uuid, so never two messages
    assert clock.monotonic() - started >= 3  # the second went once the reset had passed


async def test_a_5xx_is_sent_again_after_a_back_off_that_doubles(fake: FakeFeishu) -> None:
    """A card with a uuid is safe to send again (Feishu posts one message per uuid):
    half a second after the first 5xx, a second after the next."""
    fake.fail_next(MESSAGES_PATH, status=503, body={"code": 1000, "msg": "unavailable"},
                   times=2)
    clock = VirtualClock()
    ids = await adapter_for(fake, clock=clock).post_digest(CHAT, example_digest(),
                                                           idempotency_key=KEY)
    attempts = [r for r in fake.calls(MESSAGES_PATH) if r.method == "POST"]
    assert len(attempts) == 3 and len(ids) == 1
    assert len({a.body for a in attempts}) == 1
    assert clock.slept == [0.5, 1.0]


async def test_a_rate_limit_that_lasts_gives_up(fake: FakeFeishu) -> None:
    fake.fail_next(MESSAGES_PATH, status=400, body={"code": 230020, "msg": "frequency"},
                   headers={"x-ogw-ratelimit-reset": "0"}, times=5)
    with pytest.raises(DeliveryError, match="230020"):
        await adapter_for(fake, limits=FEISHU_LIMITS).post_digest(CHAT, example_digest())
    assert len([r for r in fake.calls(MESSAGES_PATH) if r.method == "POST"]) == 3


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [(400, {"code": 230002, "msg": "Bot/User can NOT be out of the chat."}, "230002"),
     (400, {"code": 230025, "msg": "The length of the message content reaches its limit"},
      "230025"),
     (403, {"code": 230027, "msg": "Lack of necessary permissions"}, "230027"),
     (500, {"code": 1000, "msg": "internal error"}, "1000")],
)
async def test_refusals_raise_a_delivery_error_naming_the_code(
        fake: FakeFeishu, status: int, body: dict[str, Any], expected: str) -> None:
    # Every attempt refused: a 5xx is retried (the uuid makes that safe), a 4xx is not.
    fake.fail_next(MESSAGES_PATH, status=status, body=body, times=3)
    with pytest.raises(DeliveryError, match=expected) as raised:
        await adapter_for(fake).post_digest(CHAT, example_digest())
    assert APP_SECRET not in str(raised.value)


async def test_a_wrong_app_secret_fails_without_showing_it(fake: FakeFeishu) -> None:
    adapter = feishu_adapter(CONFIG, NoHandler(), local_claims(), app_id=fake.app_id,
                             app_secret="wrong-secret-value", verification_token="v",
                             domain=fake.base_url)
    with pytest.raises(DeliveryError) as raised:
        await adapter.post_digest(CHAT, example_digest())
    assert "wrong-secret-value" not in str(raised.value)
    assert fake.sent_cards() == []


async def test_an_unreachable_feishu_is_a_delivery_error() -> None:
    with FakeFeishu(app_id=f"cli_{uuid.uuid4().hex[:16]}", app_secret=APP_SECRET) as gone:
        adapter = adapter_for(gone)
    with pytest.raises(DeliveryError, match="request failed"):
        await adapter.post_digest(CHAT, example_digest())


async def test_send_reply_posts_to_the_chat(fake: FakeFeishu) -> None:
    ids = await adapter_for(fake).send_reply(CHAT, Reply(kind="help", lang="en"))
    (sent,) = fake.sent_cards()
    assert ids == ["om_fake_1"] and sent.endpoint == "create" and sent.uuid is None


def test_every_card_of_a_huge_week_fits() -> None:
    period = Period(since=datetime(2026, 7, 13, tzinfo=UTC),
                    until=datetime(2026, 7, 20, tzinfo=UTC))
    digest = Digest(
        repository="o/r", week="2026-W29", period=period,
        counts=Counts(total=2000, key=2000, merged=2000, closed=0, opened=0),
        topics=(), types=(), hot_files=(), themes=(),
        risks=(), suggestions=tuple("建议" * 200 for _ in range(50)),
        key_pulls=tuple(KeyPull(number=n, title="t" * 200, short_title="t" * 200,
                                summary="摘要" * 300, url=f"https://github.com/o/r/pull/{n}")
                        for n in range(1, 7)),
    )
    cards = digest_cards(msgspec.structs.replace(digest, lang="zh"))
    assert all(request_bytes(card) <= MAX_REQUEST_BYTES for card in cards)
    small = digest_cards(msgspec.structs.replace(digest, lang="zh"), limit=4000)
    assert len(small) > 1
    assert all(request_bytes(card) <= 4000 for card in small)
    assert json.loads(card_content(cards[0]))["schema"] == "2.0"


# --- from the config and the environment ----------------------------------------------


ENV = {"FEISHU_APP_ID": "cli_env", "FEISHU_APP_SECRET": "env-secret-value",
       "FEISHU_VERIFICATION_TOKEN": "env-token-value", "FEISHU_ENCRYPT_KEY": "env-key-value"}


def set_env(monkeypatch: pytest.MonkeyPatch, **values: str | None) -> None:
    for name, value in {**ENV, **values}.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)


def test_from_config_reads_the_named_environment_variables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    set_env(monkeypatch)
    adapter = FeishuAdapter.from_config(CONFIG, NoHandler(), local_claims(),
                                        domain="http://127.0.0.1:9")
    assert adapter is not None
    status = adapter.status()
    assert status["configured"] and status["mode"] == "webhook" and status["signed_events"]
    assert [route.path for route in adapter.routes()] == ["/feishu/events"]  # type: ignore[attr-defined]
    shown = json.dumps(status) + json.dumps(feishu_settings.feishu_status(CONFIG))
    for value in ENV.values():
        assert value not in shown


@pytest.mark.parametrize("missing", ["FEISHU_APP_ID", "FEISHU_APP_SECRET",
                                     "FEISHU_VERIFICATION_TOKEN"])
def test_without_its_secrets_feishu_is_off(monkeypatch: pytest.MonkeyPatch,
                                           missing: str) -> None:
    set_env(monkeypatch, **{missing: None})
    assert FeishuAdapter.from_config(CONFIG, NoHandler(), local_claims()) is None
    status = feishu_settings.feishu_status(CONFIG)
    assert status["configured"] is False and missing in status["missing_env"]


def test_an_empty_verification_token_is_refused_for_webhooks() -> None:
    """The SDK would reject every real event with an empty token (it compares the
    event's token with ""), so the adapter will not start that way."""
    with pytest.raises(ValueError, match="verification token"):
        feishu_adapter(CONFIG, NoHandler(), local_claims(), app_id="cli_x", app_secret="s",
                       verification_token="")


def test_the_long_connection_needs_no_webhook_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    set_env(monkeypatch, FEISHU_VERIFICATION_TOKEN=None, FEISHU_ENCRYPT_KEY=None)
    adapter = FeishuAdapter.from_config(CONFIG, NoHandler(), local_claims(),
                                        long_connection=True)
    assert adapter is not None and adapter.routes() == []
    assert adapter.status()["mode"] == "long_connection"


async def test_the_schedulers_delivery_key_becomes_the_uuid(fake: FakeFeishu) -> None:
    """The scheduler re-sends an in-doubt delivery with the same key: same uuids."""
    adapter = adapter_for(fake)
    digest = long_digest()
    await adapter.post_digest(CHAT, digest, idempotency_key="delivery-1")
    await adapter.post_digest(CHAT, digest, idempotency_key="delivery-1")
    await adapter.post_digest(CHAT, digest, idempotency_key="delivery-2")
    sent = fake.sent_cards()
    parts = len(digest_cards(digest))
    first, again, other = (sent[i * parts:(i + 1) * parts] for i in range(3))
    assert [s.uuid for s in first] == [s.uuid for s in again]
    assert not {s.uuid for s in first} & {s.uuid for s in other}
    assert all(s.uuid is not None and len(s.uuid) <= 50 for s in sent)


def test_the_scheduler_sees_the_idempotency_keyword() -> None:
    from adapters.poster import AdapterPoster

    poster = AdapterPoster({"feishu": adapter_for_signature()})
    channel = CONFIG.channel(f"feishu:{CHAT}")
    assert channel is not None and poster.idempotency_window(channel) is not None


def adapter_for_signature() -> FeishuAdapter:
    return feishu_adapter(CONFIG, NoHandler(), local_claims(), app_id="cli_sig", app_secret="s",
                          verification_token="v", domain="http://127.0.0.1:9")


async def test_a_hostile_title_in_a_digest_reaches_feishu_escaped(fake: FakeFeishu) -> None:
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    hostile = msgspec.structs.replace(
        snapshot.pulls[0], title='[rollout] feat: <at user_id="all">all</at> **now**')
    snapshot = msgspec.structs.replace(snapshot, pulls=(hostile, *snapshot.pulls[1:]))
    digest = build_digest(snapshot, "2026-W29", repo_config=CONFIG.repo("acme/lumen"),
                          lang="en")
    await adapter_for(fake).post_digest(CHAT, digest)
    received = "".join(s.request.json()["content"] for s in fake.sent_cards())
    shown = "\n".join(s.markdown() for s in fake.sent_cards())
    assert '&#60;at user&#95;id="all"&#62;all&#60;/at&#62; &#42;&#42;now&#42;&#42;' in shown
    assert "<at" not in received and "**now**" not in received


async def test_cards_share_one_kept_alive_connection_and_one_token(fake: FakeFeishu) -> None:
    adapter = adapter_for(fake)
    for chat in (CHAT, "oc_other", CHAT):
        await adapter.post_digest(chat, example_digest())
    posts = [r for r in fake.calls(MESSAGES_PATH) if r.method == "POST"]
    assert len(posts) == 3
    assert len({r.peer for r in posts}) == 1
    assert len(fake.calls(TOKEN_PATH)) == 1
    assert {r.headers["authorization"] for r in posts} == {f"Bearer {fake.tokens[0]}"}


async def test_a_message_id_is_one_path_segment_whatever_it_holds(fake: FakeFeishu) -> None:
    adapter = adapter_for(fake)
    transport = FeishuTransport(adapter.sdk_config, TENANT_TOKENS)
    body = (ReplyMessageRequestBody.builder().msg_type("text")
            .content(json.dumps({"text": "hi"})).build())
    request = (ReplyMessageRequest.builder().message_id("om_a/../b?x=1#y")
               .request_body(body).build())
    answer = await transport.send(request, ReplyMessageResponse)
    await transport.close()
    # the fake's refusal (a text message) comes back parsed, as the SDK parses it
    assert answer.code != 0 and answer.raw.status_code == 400
    (post,) = [r for r in fake.requests if r.path.endswith("/reply")]
    # one segment, decoded back to the id (`=` may travel unescaped: it is legal there)
    head, segment, tail = post.path.rsplit("/", 2)
    assert (head, tail) == ("/open-apis/im/v1/messages", "reply")
    assert urllib.parse.unquote(segment) == "om_a/../b?x=1#y"
    assert post.json() == {"msg_type": "text", "content": json.dumps({"text": "hi"})}


async def test_an_update_sent_again_after_a_5xx_never_lands_over_a_later_one(
        fake: FakeFeishu) -> None:
    # Two clicks on one card: the first's update is answered 503 and tried again after
    # its back-off; the second, begun meanwhile, waits its turn and is what stays.
    adapter = adapter_for(fake, clock=SYSTEM_CLOCK)
    [sent] = await adapter.post_digest(CHAT, example_digest())
    path = f"{MESSAGES_PATH}/{sent}"
    fake.fail_next(path, status=503, body={"code": 2200, "msg": "internal error"})

    def card(text: str) -> dict[str, Any]:
        return {"schema": "2.0", "config": {"update_multi": True},
                "body": {"elements": [{"tag": "markdown", "content": text}]}}

    first = asyncio.create_task(adapter._sender.patch(card("first"), message_id=sent, chat=CHAT))
    while not [r for r in fake.calls(path) if r.method == "PATCH"]:
        await asyncio.sleep(0.01)
    await adapter._sender.patch(card("second"), message_id=sent, chat=CHAT)
    await first
    shown = fake.card(sent)
    assert shown is not None and shown["body"]["elements"][0]["content"] == "second"
    assert [r.method for r in fake.calls(path)] == ["PATCH"] * 3
    assert adapter._sender._updating == {}  # nothing kept once the updates are done
