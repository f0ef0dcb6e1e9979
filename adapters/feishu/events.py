"""Feishu's event callbacks checked and decoded with lark-oapi's own parts - its AES
cipher, JSON codec, event envelope, `P2ImMessageReceiveV1` and `P2CardActionTrigger`
models - without its `EventDispatcherHandler`, whose module imports the event
processors of every Open API service (some 6,000 modules, ~100 MiB) for the two kinds
this bot handles: a message, and a click on a card's button (`card.action.trigger`,
whose answer - a toast - goes back in the response, as the SDK's callback processors
return it).

The checks are the SDK's, in its order: decrypt (`encrypt` with the Encrypt Key), read
the envelope, compare the verification token (constant time), answer a URL
verification with its challenge, then the signature: SHA-256 of timestamp, nonce,
Encrypt Key and body. The adapter adds what the SDK leaves out (`adapters.feishu.inbound`:
the header names, the freshness window).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lark_oapi.api.im.v1.model.p2_im_message_receive_v1 import P2ImMessageReceiveV1
from lark_oapi.core.json import JSON
from lark_oapi.core.utils.decryptor import AESCipher
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger
from lark_oapi.event.context import EventContext

from adapters.feishu.inbound import NONCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER
from adapters.webhooks import same_secret

logger = logging.getLogger(__name__)

MESSAGE_RECEIVED = "p2.im.message.receive_v1"
CARD_ACTION = "p2.card.action.trigger"
URL_VERIFICATION = "url_verification"


class Refused(Exception):
    """A request that is not Feishu's: bad token, signature or encryption."""


class NotHandled(Exception):
    """An authentic event of a type this bot does not handle."""


@dataclass(frozen=True)
class Verdict:
    """What became of one callback: `challenge` (answer `body`), `handled` (a message
    event, handed on), `ignored` (authentic, another event type) or `refused`."""

    outcome: Literal["challenge", "handled", "ignored", "refused"]
    body: str = ""


class FeishuEvents:
    """One app's callbacks: `receive` for the webhook, `_do_without_validation` for
    the long connection (the name and contract the SDK's socket client calls)."""

    def __init__(self, encrypt_key: str, verification_token: str,
                 on_message: Callable[[P2ImMessageReceiveV1], None],
                 on_click: Callable[[P2CardActionTrigger], Any] | None = None) -> None:
        """`on_click`: a card callback (a button clicked), checked like an event; what
        it returns is the callback's answer on the long connection."""
        self._encrypt_key = encrypt_key
        self._verification_token = verification_token
        self._on_message = on_message
        self._on_click = on_click

    def receive(self, body: bytes, headers: Mapping[str, str]) -> Verdict:
        """Check and decode a webhook request; a message event goes to `on_message`."""
        try:
            plaintext = self._decrypt(body)
            context = _envelope(plaintext)
            if self._verification_token and (not self._encrypt_key or context.token is not None
                                             or context.type == URL_VERIFICATION):
                _same_token(context.token, self._verification_token)
            elif context.token is not None and context.token != self._verification_token:
                raise Refused("invalid verification_token")
            if context.type == URL_VERIFICATION:
                return Verdict("challenge", json.dumps({"challenge": context.challenge}))
            self._verify_signature(body, headers)
            handled, _ = self._dispatch(context, plaintext)
        except Refused as exc:
            logger.warning("feishu: event refused: %s", exc)
            return Verdict("refused", str(exc))
        return Verdict("handled") if handled else Verdict("ignored")

    def _do_without_validation(self, payload: bytes) -> Any:
        """An event from the long connection: already authenticated and decrypted. One
        this bot does not handle raises, as the SDK's dispatcher does: the socket
        client then answers Feishu 500 and logs one line. A card callback's answer
        is returned, for the socket client to send back."""
        plaintext = payload.decode("utf-8")
        context = _envelope(plaintext)
        handled, answer = self._dispatch(context, plaintext)
        if not handled:
            raise NotHandled(f"processor not found, type: {context.type}")
        return answer

    def _dispatch(self, context: Any, plaintext: str) -> tuple[bool, Any]:
        """Whether the event is one this bot handles (handed on), and the answer of a
        card callback."""
        kind = f"{context.schema}.{context.type}"
        if kind == CARD_ACTION and self._on_click is not None:
            try:
                click = JSON.unmarshal(plaintext, P2CardActionTrigger)
            except Exception:  # signed, but not the shape of a card callback
                raise Refused("malformed card callback") from None
            return True, self._on_click(click)
        if kind != MESSAGE_RECEIVED:
            logger.debug("feishu: event %s.%s ignored", context.schema, context.type)
            return False, None
        try:
            event = JSON.unmarshal(plaintext, P2ImMessageReceiveV1)
        except Exception:  # signed, but not the shape of a message event
            raise Refused("malformed message event") from None
        self._on_message(event)
        return True, None

    def _decrypt(self, body: bytes) -> str:
        try:
            encrypted = json.loads(body).get("encrypt")
        except (ValueError, AttributeError, RecursionError):
            raise Refused("body is not a JSON object") from None
        if not encrypted:
            return body.decode("utf-8", "replace")
        if not self._encrypt_key:
            raise Refused("encrypted event without an encrypt key")
        try:
            return str(AESCipher(self._encrypt_key).decrypt_str(encrypted))
        except Exception:  # a wrong key or a forged payload: padding, UTF-8, base64
            raise Refused("could not decrypt the event") from None

    def _verify_signature(self, body: bytes, headers: Mapping[str, str]) -> None:
        if not self._encrypt_key:
            return
        signed = (headers.get(TIMESTAMP_HEADER, "") + headers.get(NONCE_HEADER, "")
                  + self._encrypt_key).encode() + body
        expected = hashlib.sha256(signed).hexdigest()
        if not same_secret(headers.get(SIGNATURE_HEADER, ""), expected):
            raise Refused("signature verification failed")


def _envelope(plaintext: str) -> Any:
    """The event's envelope with `schema`, `type` and `token` filled in as the SDK does
    for its two schemas (2.0: from the header; 1.0: from the event)."""
    try:
        context = JSON.unmarshal(plaintext, EventContext)
    except Exception:
        raise Refused("not an event") from None
    if context.schema:
        context.schema = "p2"
        context.type = context.header.event_type if context.header else None
        context.token = context.header.token if context.header else None
    elif context.uuid:
        context.schema = "p1"
        context.type = (context.event or {}).get("type")
    return context


def _same_token(token: Any, expected: str) -> None:
    if not isinstance(token, str) or not same_secret(token, expected):
        raise Refused("invalid verification_token")
