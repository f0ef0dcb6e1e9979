"""Feishu (Lark): answers @mentions and direct messages, posts digests as cards.

Inbound, `adapters.feishu.events` decrypts events and checks the verification token
and signature as the SDK's dispatcher does (with the SDK's cipher and models, without
the dispatcher's import of every service); this adapter adds the header names, a
freshness window on the signed timestamp, 401 for a forged or stale request - and
hands the work to a task so Feishu gets its 200 within 3 s. Each event is answered
once (`header.event_id` through `Claims`); one another process began answering is
refused with a 503, which Feishu re-sends.

Outbound, cards are SDK requests (`im.v1.message.create`/`reply`, retried by
`adapters.feishu.outbound`) sent by `FeishuTransport` over one pooled connection, on
the event loop; the SDK keeps the
tenant token (fetched in a worker thread, as its fetch blocks). Only the SDK modules
these use are loaded (`adapters.feishu.sdk`). The long connection
(`lark_oapi.ws.Client`) is an option for a bot without a public URL; it runs in a thread
with its own event loop.

The Feishu app this expects (developer console):
- Bot capability on; permissions `im:message:send_as_bot`,
  `im:message.group_at_msg:readonly` (group messages that @mention the bot) and
  `im:message.p2p_msg:readonly` (direct messages); event `im.message.receive_v1`.
- Webhook mode: request URL `https://<public host>/feishu/events`; set an Encrypt Key
  (events are then encrypted and signed) and copy it and the Verification Token into
  the variables `[platforms.feishu]` names. Long connection mode
  (`long_connection = true`): choose "receive events through persistent connection";
  only the app id and secret are needed.
- Buttons that act: the callback `card.action.trigger` at the same request URL (or
  through the persistent connection); see `adapters.feishu.clicks`.
- Cards use card JSON 2.0, which Feishu clients from 7.20 show.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, ClassVar

from lark_oapi.api.im.v1.model.p2_im_message_receive_v1 import P2ImMessageReceiveV1
from lark_oapi.core.enum import LogLevel
from lark_oapi.core.json import JSON
from lark_oapi.core.log import logger as lark_logger
from lark_oapi.core.model import Config as SdkConfig
from lark_oapi.core.token import TokenManager
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from adapters.answering import take
from adapters.base import DeliveryError
from adapters.delivering import NoArrivalLookup
from adapters.feishu.admins import is_chat_admin
from adapters.feishu.clicks import is_click, on_its_way, question_from_click
from adapters.feishu.events import FeishuEvents
from adapters.feishu.inbound import TIMESTAMP_HEADER, question_from_event, sdk_headers
from adapters.feishu.long_connection import LongConnection
from adapters.feishu.outbound import SERVER_ERROR_BACKOFF, CardSender
from adapters.feishu.payloads import digest_payloads, message_uuid, reply_payloads
from adapters.feishu.render import MAX_REQUEST_BYTES, Card, reply_cards
from adapters.feishu.settings import FeishuSecrets, FeishuSettings, feishu_settings
from adapters.feishu.tokens import TENANT_TOKENS
from adapters.feishu.transport import FeishuTransport
from adapters.fields import plain
from adapters.handover import Handover
from adapters.overrides import settings_with
from adapters.paced import Paced
from adapters.sending import Limits
from adapters.webhooks import Unreadable, is_fresh, json_object, retry_later
from bot.chat.clicks import place_answer
from bot.chat.grammar import DEFAULT_BOT_NAMES
from bot.chat.inbound import CommandAnswering, FirstSeen, Inbox, Question
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, secret
from bot.models import Admission, Digest, Lang, Reply
from bot.pacing import MAX_TURN_WAIT, LocalPacer, Pacer

logger = logging.getLogger(__name__)

# A signed request older or newer than this is refused (replay window).
FRESHNESS_SECONDS = 300.0
# Feishu events are a few KB; anything far larger is not one.
MAX_EVENT_BYTES = 1024 * 1024
# What a body that is not an event is answered (`adapters.webhooks.Unreadable`).
_UNREADABLE = {"too large": "payload too large", "not JSON": "body is not JSON",
               "not an object": "body is not a JSON object"}
# How long to wait for the bot's identity before answering without it.
_IDENTITY_RETRY_SECONDS = 300.0
# The events the SDK hands over while a webhook request is read: admitted before Feishu
# hears back (the SDK calls `_on_message_event` synchronously, in that request's context).
_WEBHOOK_EVENTS: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "feishu_webhook_events", default=None)


def _quiet_sdk_rejections() -> None:
    """One line per log record: lark-oapi's logger has a stdout handler of its own and
    also passes its records up to the service's, which wrote each line twice; without
    its handler, its lines are the service's (one format, one redaction). Refused
    webhook events are logged by `FeishuEvents`, once, without a traceback."""
    for handler in list(lark_logger.handlers):
        lark_logger.removeHandler(handler)


def sdk_config(app_id: str, app_secret: str, domain: str, timeout_seconds: float
               ) -> SdkConfig:
    """The SDK's settings for one app, as its `Client` builder would make them (without
    the `Client`, whose module imports every service): tenant tokens kept in
    `TENANT_TOKENS`, the SDK's log at WARNING."""
    config = SdkConfig()
    config.app_id, config.app_secret = app_id, app_secret
    config.domain, config.timeout = domain, timeout_seconds
    config.cache, config.log_level = TENANT_TOKENS, LogLevel.WARNING
    TokenManager.cache = TENANT_TOKENS
    lark_logger.setLevel(int(LogLevel.WARNING.value))
    return config


# A card is tried three times (a 5xx backed off from 0.5 s, doubling: its uuid makes
# a re-send safe); no turn is waited for longer than `bot.pacing.MAX_TURN_WAIT`.
FEISHU_LIMITS = Limits(attempts=3, max_wait=MAX_TURN_WAIT, backoff=SERVER_ERROR_BACKOFF)


class FeishuAdapter(NoArrivalLookup):
    """One Feishu app: its webhook route, its optional long connection, its sends.
    Feishu cannot be asked which uuids it has seen; a re-sent post or notice carries
    the same `uuid`, which stops a second post within `dedupe_window`, so the
    scheduler decides by that."""

    platform: ClassVar[str] = "feishu"
    # Feishu limits a card by request body bytes, not characters.
    max_message_chars: ClassVar[int] = MAX_REQUEST_BYTES
    max_request_bytes: ClassVar[int] = MAX_REQUEST_BYTES
    route_path: ClassVar[str] = "/feishu/events"
    # "Requests holding the same uuid send at most one message within 1 hour."
    dedupe_window: ClassVar[timedelta | None] = timedelta(hours=1)
    max_inbound_bytes: ClassVar[int] = MAX_EVENT_BYTES
    refusal_headers: ClassVar[Mapping[str, str]] = {}
    # The language of `#7035` asked in a chat the config does not list.
    default_lang: ClassVar[Lang] = "zh"

    def __init__(
        self,
        config: Config,
        handler: CommandAnswering,
        deduper: FirstSeen,
        credentials: FeishuSecrets,
        settings: FeishuSettings | None = None,
        *,
        outbound_only: bool = False,
        pacer: Pacer | None = None,
        clock: Clock = SYSTEM_CLOCK,
        bot_open_id: str | None = None,
        auto_reconnect: bool = True,
        freshness_seconds: float = FRESHNESS_SECONDS,
        limits: Limits = FEISHU_LIMITS,
        timeout_seconds: float = 10.0,
    ) -> None:
        """`settings`: the config's `[platforms.feishu]` (its Open API domain, the long
        connection, the pace of messages; default: `config`'s); `outbound_only`: only
        posts (`prdigest post`), which needs the app's id and secret alone."""
        settings = settings if settings is not None else feishu_settings(config)
        app_id, app_secret = credentials.app_id, credentials.app_secret
        verification_token, encrypt_key = credentials.verification_token, credentials.encrypt_key
        domain = settings.domain
        long_connection = settings.long_connection and not outbound_only
        if not long_connection and not verification_token and not outbound_only:
            # The SDK rejects every real event when its token is empty (it compares the
            # event's token with ""), so a webhook without one could never answer.
            raise ValueError("Feishu webhook mode needs the verification token")
        self._app_id = app_id
        self._encrypt_key = encrypt_key or ""
        self._verification_token = verification_token or ""
        self._long_connection = long_connection
        self._outbound_only = outbound_only
        self._freshness = freshness_seconds
        self._clock = clock
        self.sdk_config = sdk_config(app_id, app_secret, domain, timeout_seconds)
        self._transport = FeishuTransport(self.sdk_config, TENANT_TOKENS)
        self._inbox = Inbox(handler, deduper, default_lang=self.default_lang,
                            chat_admins=functools.partial(is_chat_admin, self._transport),
                            clock=clock)
        self._sender = CardSender(self._transport, app_id, Paced(
            pacer if pacer is not None else LocalPacer(clock), settings.post_lanes, limits, clock))
        self._dispatcher = self._event_dispatcher(self._encrypt_key, self._verification_token)
        _quiet_sdk_rejections()
        self._bot_open_id = bot_open_id
        self._bot_name: str | None = None
        self._identity_checked_at: float | None = None
        self._identity_lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._answers = Handover(clock=clock)
        self._connection = LongConnection(
            app_id=app_id, app_secret=app_secret, domain=domain, auto_reconnect=auto_reconnect,
            make_dispatcher=lambda: self._event_dispatcher("", ""))

    # --- construction ----------------------------------------------------------------

    @classmethod
    def from_config(cls, config: Config, handler: CommandAnswering, deduper: FirstSeen,
                    **overrides: Any) -> FeishuAdapter | None:
        """The adapter the config and environment describe, or None when the app's
        credentials are not in the environment (Feishu is then simply off).
        `overrides` replace fields of `[platforms.feishu]` (`domain` for a fake server)
        or constructor arguments; `outbound_only=True` builds one that only posts
        (`prdigest post`): the app id and secret are all it needs."""
        section = settings_with(feishu_settings(config), overrides)
        outbound_only = bool(overrides.pop("outbound_only", False))
        app_id, app_secret = secret(section.app_id_env), secret(section.app_secret_env)
        if app_id is None or app_secret is None:
            logger.info("feishu off: %s or %s is not set", section.app_id_env,
                        section.app_secret_env)
            return None
        credentials = FeishuSecrets(app_id, app_secret, secret(section.verification_token_env),
                                    secret(section.encrypt_key_env))
        webhook = not section.long_connection and not outbound_only
        if webhook and not credentials.verification_token:
            logger.warning("feishu off: webhook mode needs %s (or long_connection = true)",
                           section.verification_token_env)
            return None
        if webhook and not credentials.encrypt_key:
            logger.warning("feishu: %s is not set, so events are not signed; set an "
                           "encrypt key in the app console", section.encrypt_key_env)
        return cls(config, handler, deduper, credentials, section, outbound_only=outbound_only,
                   **overrides)

    def status(self) -> dict[str, Any]:
        """What /healthz shows: mode and health, never a secret."""
        return {
            "platform": self.platform,
            "configured": True,
            "mode": "long_connection" if self._long_connection else "webhook",
            "route": None if self._long_connection else self.route_path,
            "signed_events": bool(self._encrypt_key),
            "bot_identity_known": self._bot_open_id is not None,
            "long_connection_running": self._connection.running,
            "answers_in_flight": len(self._answers),
        }

    def _event_dispatcher(self, encrypt_key: str, verification_token: str) -> FeishuEvents:
        return FeishuEvents(encrypt_key, verification_token, self._on_message_event,
                            self._on_click_event)

    # --- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Remember the server's loop, learn the bot's identity, open the long
        connection when configured. Idempotent."""
        self._loop = asyncio.get_running_loop()
        if self._bot_open_id is None:
            # In the background: an unreachable Feishu must not hold up the server.
            self._answers.spawn(self._ensure_identity())
        if self._long_connection:
            self._connection.start()

    async def close(self) -> None:
        """Stop the long connection and let answers in flight finish."""
        await self._connection.stop()
        await self.wait_idle(timeout=10.0)
        await self._transport.close()

    async def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait until every event received so far has been answered (or failed), for at
        most `timeout` seconds of real time: the answers are requests to Feishu in
        flight, which a virtual clock's deadline would pass before they end."""
        if not await self._answers.settle(timeout):
            logger.warning("feishu: %d answers still running at shutdown", len(self._answers))

    # --- inbound: the webhook --------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """The event route; none on a long connection or for an adapter that only posts."""
        if self._long_connection or self._outbound_only:
            return []
        return [Route(self.route_path, self.receive, methods=["POST"])]

    async def receive(self, request: Request) -> Response:
        """Feishu's event callback: verify, acknowledge at once, answer in the background."""
        try:
            await json_object(request, MAX_EVENT_BYTES)
        except Unreadable as bad:
            return JSONResponse({"msg": _UNREADABLE[bad.problem]}, status_code=bad.status)
        body = await request.body()
        headers = sdk_headers(request.headers)
        # The signed timestamp is Feishu's real time: judged against the machine's, not
        # the process's clock (a held date, `serve --snapshot`, would refuse every event).
        if not is_fresh(headers.get(TIMESTAMP_HEADER), time.time(), self._freshness):
            return JSONResponse({"msg": "unauthorized"}, status_code=401)
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        # Decryption, token and signature checks; a valid message event reaches
        # `_on_message_event`, which hands it back here through `_WEBHOOK_EVENTS`.
        events: list[dict[str, Any]] = []
        reset = _WEBHOOK_EVENTS.set(events)
        try:
            verdict = self._dispatcher.receive(body, headers)
        finally:
            _WEBHOOK_EVENTS.reset(reset)
        if verdict.outcome == "challenge":
            return Response(verdict.body, status_code=200, media_type="application/json")
        if verdict.outcome == "handled":
            answer: dict[str, Any] = {"msg": "success"}
            for payload in events:
                admission = await self._admit(payload)
                if admission == "later":
                    return retry_later({"msg": "busy, retry later"})
                if is_click(payload):
                    # A card callback's answer is what the clicker sees at once.
                    answer = on_its_way() if admission == "answer" else {}
            return JSONResponse(answer, status_code=200)
        if verdict.outcome == "ignored":
            # Authentic, but an event this bot does not handle: acknowledge it so
            # Feishu does not re-deliver it.
            return JSONResponse({"msg": "ignored"}, status_code=200)
        # A bad token, signature or encryption: the caller's fault, and nothing was done.
        return JSONResponse({"msg": "unauthorized"}, status_code=401)

    def _on_message_event(self, data: P2ImMessageReceiveV1) -> None:
        """Called by the SDK (webhook: in the server's loop; long connection: in its own
        thread) for a verified message event; schedules the answer and returns."""
        try:
            # As the dict `JSON.marshal` would write, without its deep copy and JSON
            # round trip.
            payload = plain(data, lambda value: json.loads(JSON.marshal(value) or "null"))
            if not isinstance(payload, dict):
                payload = {}
            webhook = _WEBHOOK_EVENTS.get()
            if webhook is not None:
                webhook.append(payload)
                return
            self._schedule(payload)
        except Exception:
            logger.exception("feishu: could not schedule an event")

    def _on_click_event(self, data: Any) -> dict[str, Any]:
        """A verified card callback (`adapters.feishu.clicks`): handled as a message
        event is; on the long connection, the toast returned is the callback's answer."""
        self._on_message_event(data)
        return on_its_way()

    def _question(self, payload: dict[str, Any]) -> Question | None:
        """The question in an event: a message to the bot, or a click on a button."""
        if is_click(payload):
            return question_from_click(payload)
        return question_from_event(payload, self._bot_open_id)

    def _schedule(self, payload: dict[str, Any]) -> None:
        """An event of the long connection (its own thread), answered on the server's loop."""
        if self._loop is None:
            logger.warning("feishu: event before start(); dropped")
            return
        self._answers.spawn_in(self._loop, lambda: self._answer(payload))

    async def _admit(self, payload: dict[str, Any]) -> Admission | None:
        """Admit a webhook's event before Feishu hears back and answer it in the
        background; the inbox's admission ("later": Feishu should send it again), None
        when it holds no question. The bot's identity may not be known yet: then every
        mention counts, and `_answer` looks again once it is."""
        question = self._question(payload)
        if question is None:
            return None
        return await take(self._inbox, question, self._answers,
                          lambda admitted: self._answer(payload, admitted))

    async def _answer(self, payload: dict[str, Any], admitted: Question | None = None) -> None:
        """Read the event, let the shared inbox answer (once per event, never raising),
        reply; every failure is logged, none reaches Feishu as an error. `admitted`: the
        question the webhook admitted before acknowledging."""
        try:
            await self._ensure_identity()
            question = self._question(payload)
            if question is None:
                if admitted is not None:  # the mention was another's, after all
                    await self._inbox.dismiss(admitted)
                return
            names = tuple(n for n in (*DEFAULT_BOT_NAMES, self._bot_name) if n)
            await self._inbox.answer(question, names, admitted=admitted is not None,
                                     send=lambda reply: self._reply(question, reply))
        except DeliveryError as exc:
            logger.warning("feishu: answer not delivered: %s", exc)
        except Exception:
            logger.exception("feishu: answering an event failed")

    async def _reply(self, question: Question, reply: Reply) -> None:
        """Cards in answer to the question's message, replying to it, or a card in place
        of the one clicked (`bot.chat.clicks.place_answer`)."""
        async def add(cards: Sequence[Card]) -> None:
            for index, card in enumerate(cards):
                uuid = message_uuid("reply", question.delivery_key, index)
                await self._sender.reply(card, chat=question.channel_id,
                                         reply_to=question.reply_to, uuid=uuid)

        await place_answer(question.action, reply, reply_cards(reply), add=add,
                           replace=functools.partial(self._sender.patch, chat=question.channel_id,
                                                     message_id=question.reply_to),
                           refused=(DeliveryError,))

    async def _ensure_identity(self) -> None:
        """The bot's open_id tells its own @mention from others; fetched once, again
        after a failure at most every few minutes."""
        if self._bot_open_id is not None:
            return
        async with self._identity_lock:
            now = self._clock.monotonic()
            if self._bot_open_id is not None or (
                self._identity_checked_at is not None
                and now - self._identity_checked_at < _IDENTITY_RETRY_SECONDS
            ):
                return
            self._identity_checked_at = now
            from lark_oapi.channel.bot_identity import fetch_bot_identity

            config = self.sdk_config
            try:
                # The SDK helper fetches the tenant token synchronously: own thread, own loop.
                identity = await asyncio.to_thread(asyncio.run, fetch_bot_identity(config))
            except Exception as exc:
                identity = None
                logger.warning("feishu: bot identity unavailable (%s)", type(exc).__name__)
            if identity is not None:
                self._bot_open_id = identity.open_id
                self._bot_name = identity.name or None

    # --- outbound --------------------------------------------------------------------

    async def send_reply(self, channel_id: str, reply: Reply, *, thread: str | None = None,
                         idempotency_key: str | None = None) -> list[str]:
        """Post a reply to a chat, or with `thread` in the thread of that message (the
        reply API, `reply_in_thread`); returns message ids. Each card carries a `uuid`
        made from `idempotency_key`, so a retry within the hour posts nothing twice. A
        parent recalled or deleted raises `ParentGone` (Feishu posted nothing)."""
        if thread is None:
            return [await self._sender.create(body)
                    for body in reply_payloads(channel_id, reply, key=idempotency_key)]
        ids = []
        for index, card in enumerate(reply_cards(reply)):
            uuid = (message_uuid("thread", idempotency_key, index)
                    if idempotency_key is not None else None)
            ids.append(await self._sender.reply(card, chat=channel_id, reply_to=thread, uuid=uuid,
                                                in_thread=True))
        return ids

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        """Post the weekly digest as one or more cards; raises `DeliveryError` unless
        Feishu accepted every one.

        Each card carries a `uuid` (Feishu sends at most one message per uuid within an
        hour) made from `idempotency_key` - the scheduler's delivery key, the same for
        every retry of one delivery - and the part number. A replica re-sending after a
        crash within the hour therefore posts nothing twice.
        """
        return [await self._sender.create(body)
                for body in digest_payloads(channel_id, digest, key=idempotency_key)]

