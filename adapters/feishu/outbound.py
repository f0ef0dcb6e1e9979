"""Feishu outbound: cards created in a chat, sent as replies or put in place of a card
clicked (`im.v1.message.patch`), each in its turn of the app's and the chat's pacing
lanes (`bot.pacing`), each request retried where that is safe - a refused tenant token
renewed, a rate limit held off in those lanes (for every replica when they live in
Redis) and tried again in the next turn, a 5xx re-sent when the card's `uuid` makes a
second copy impossible, or when it is a patch, which puts the same card in place again."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from typing import Any

from lark_oapi.api.im.v1 import (
    CreateMessageRequest,
    CreateMessageRequestBody,
    CreateMessageResponse,
    PatchMessageRequest,
    PatchMessageRequestBody,
    PatchMessageResponse,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
    ReplyMessageResponse,
)

from adapters.base import DeliveryError, ParentGone
from adapters.feishu.render import Card, card_content
from adapters.feishu.tokens import TENANT_TOKENS
from adapters.feishu.transport import FeishuTransport, rate_limit_wait, server_error
from adapters.paced import Paced
from adapters.sending import BackOff, HoldOff, Outcome, Refused, TryAgain

logger = logging.getLogger(__name__)

# The tenant token was refused: invalid (99991663-99991668) or expired (99991677).
_TOKEN_REFUSED_CODES = frozenset({99991663, 99991664, 99991665, 99991666, 99991668,
                                  99991677})
# The reply API's answer when the message replied to was recalled (230011) or is not
# found, deleted (231003): nothing was posted.
PARENT_GONE_CODES = frozenset({230011, 231003})
# First wait before re-sending a card Feishu failed with a 5xx; doubled each time.
SERVER_ERROR_BACKOFF = 0.5


class CardSender:
    """Sends the cards of one app (`app_id`) over `transport` through the shared loop
    (`adapters.sending`), each in its turn of its chat's lanes as `paced` says; a 5xx's
    back-off waited out on its clock."""

    def __init__(self, transport: FeishuTransport, app_id: str, paced: Paced) -> None:
        self.transport = transport
        self.app_id = app_id
        self.paced = paced
        # Each card's updates in turn, with how many wait: an update sent again after a
        # 5xx never lands over one begun after it (two clicks on one card).
        self._updating: dict[str, tuple[asyncio.Lock, int]] = {}

    async def create(self, body: dict[str, Any]) -> str:
        """Post one card to a chat: the request body of `adapters.feishu.payloads`."""
        builder = (CreateMessageRequestBody.builder().receive_id(body["receive_id"])
                   .msg_type(body["msg_type"]).content(body["content"]))
        if body.get("uuid"):
            builder = builder.uuid(body["uuid"])
        request = (CreateMessageRequest.builder().receive_id_type("chat_id")
                   .request_body(builder.build()).build())
        return await self.request(request, CreateMessageResponse, uuid=body.get("uuid"),
                                  chat=str(body["receive_id"]))

    async def reply(self, card: Card, *, chat: str, reply_to: str | None,
                    uuid: str | None = None, in_thread: bool = False) -> str:
        """Answer a message in `chat` with one card (in its thread with `in_thread`)."""
        reply_body = (ReplyMessageRequestBody.builder().msg_type("interactive")
                      .content(card_content(card)))
        if in_thread:
            reply_body = reply_body.reply_in_thread(True)
        if uuid:
            reply_body = reply_body.uuid(uuid)
        request = (ReplyMessageRequest.builder().message_id(reply_to)
                   .request_body(reply_body.build()).build())
        return await self.request(request, ReplyMessageResponse, uuid=uuid, chat=chat)

    async def patch(self, card: Card, *, message_id: str | None, chat: str) -> None:
        """Put `card` in place of the card `message_id` the bot sent in `chat`."""
        request = (PatchMessageRequest.builder().message_id(message_id or "")
                   .request_body(PatchMessageRequestBody.builder()
                                 .content(card_content(card)).build()).build())
        # A patch puts the same card in place however often it is sent: a 5xx is safe
        # to re-send without a uuid.
        async with self._in_turn(message_id or ""):
            await self.request(request, PatchMessageResponse, uuid=None, chat=chat,
                               repeatable=True)

    @contextlib.asynccontextmanager
    async def _in_turn(self, message_id: str) -> AsyncIterator[None]:
        """The turn of one update of `message_id`'s card, after those begun before it."""
        lock, waiting = self._updating.get(message_id, (asyncio.Lock(), 0))
        self._updating[message_id] = (lock, waiting + 1)
        try:
            async with lock:
                yield
        finally:
            lock, waiting = self._updating[message_id]
            if waiting > 1:
                self._updating[message_id] = (lock, waiting - 1)
            else:
                del self._updating[message_id]

    async def request(self, request: CreateMessageRequest | ReplyMessageRequest
                      | PatchMessageRequest, answer_type: type[Any], *, uuid: str | None,
                      chat: str, repeatable: bool = False) -> str:
        """The id of the message sent (none for a patch), through the shared loop; a 5xx
        is sent again when the request is `repeatable` or carries a `uuid`."""
        async def call() -> str:
            try:
                response = await self.transport.send(request, answer_type)
            except Exception as exc:
                raise DeliveryError(f"feishu: request failed ({type(exc).__name__}: {exc})") \
                    from None
            data = getattr(response, "data", None)
            if response.success() and (answer_type is PatchMessageResponse
                                       or (data is not None and data.message_id)):
                return str(getattr(data, "message_id", ""))
            raise NotSent(response, answer_type)

        return await self.paced.send(
            call, functools.partial(self._outcome, repeatable=repeatable or bool(uuid)), chat=chat,
            late=lambda late: DeliveryError(
                f"feishu is rate limited for {late.seconds:.0f} s more; the card was not sent"))

    def _outcome(self, exc: Exception, *, repeatable: bool) -> Outcome:
        """Feishu's error mapping: a refused tenant token renewed and tried again, a rate
        limit held off, a 5xx backed off when a re-send is safe (a uuid, a patch)."""
        if not isinstance(exc, NotSent):
            return Refused(exc)
        response = exc.response
        refusal = _refusal(response, exc.answer_type)
        limited = rate_limit_wait(response)
        if response.code in _TOKEN_REFUSED_CODES:
            # Expired or revoked: fetch a new tenant token and send again.
            logger.info("feishu: tenant token refused (code %s); renewing it", response.code)
            TENANT_TOKENS.forget(self.app_id)
            return TryAgain(refusal) if limited is None else HoldOff(refusal, seconds=limited)
        if limited is not None:
            return HoldOff(refusal, seconds=limited)  # in the next turn, after the hold
        if repeatable and server_error(response):
            # Safe to send again: Feishu posts one message per uuid; a patch is the same.
            return BackOff(refusal)
        return Refused(refusal)


class NotSent(Exception):
    """Feishu answered without sending: `response` says why."""

    def __init__(self, response: Any, answer_type: type[Any]) -> None:
        super().__init__(f"code {response.code}")
        self.response = response
        self.answer_type = answer_type


def _refusal(response: Any, answer_type: type[Any]) -> DeliveryError:
    """What Feishu's refusal of a card means: the message replied to gone, or why."""
    if answer_type is ReplyMessageResponse and response.code in PARENT_GONE_CODES:
        return ParentGone(f"feishu: the message to reply under is gone (code "
                          f"{response.code})")
    return DeliveryError(f"feishu refused the card: code {response.code}, "
                         f"{response.msg or 'no message'}")
