"""The message requests Feishu receives: built here once, sent by the adapter and
printed by the previews (`prdigest digest --format feishu`, `post --dry-run`). No
lark-oapi import: a preview does not pay for the SDK."""

from __future__ import annotations

import hashlib
from typing import Any

from adapters.base import no_viewer
from adapters.feishu.render import Card, card_content, digest_cards, reply_cards
from bot.models import Digest, Reply

# `im.v1.message.create`: the chat is named by its `oc_` id.
METHOD = "POST /open-apis/im/v1/messages?receive_id_type=chat_id"


def create_body(chat_id: str, card: Card, uuid: str | None = None) -> dict[str, Any]:
    """One card's request body; `uuid` makes Feishu post it once within an hour."""
    body: dict[str, Any] = {"receive_id": chat_id, "msg_type": "interactive",
                            "content": card_content(card)}
    if uuid:
        body["uuid"] = uuid
    return body


def message_uuid(*parts: object) -> str:
    """Feishu's idempotency key (at most 50 characters), stable for the same parts."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:40]


def digest_payloads(channel_id: str, digest: Digest, *, key: str | None = None
                    ) -> list[dict[str, Any]]:
    """Every card of a weekly digest; with `key` (the scheduler's delivery key, the same
    for every retry of one delivery) each card's `uuid` is made from it and the part
    number, so Feishu posts a re-sent delivery once. Without a key, no `uuid`: two
    different digests must never share one."""
    return [create_body(channel_id, card,
                        message_uuid("digest", key, index) if key is not None else None)
            for index, card in enumerate(digest_cards(digest))]


def reply_payloads(channel_id: str, reply: Reply, *, key: str | None = None
                   ) -> list[dict[str, Any]]:
    """A reply posted to a chat (a notice, an answer), card by card; with `key` (the
    same for every retry of one notice) each card gets a `uuid` from it."""
    return [create_body(channel_id, card,
                        message_uuid("reply", key, index) if key is not None else None)
            for index, card in enumerate(reply_cards(reply))]

# The platform has no public page that lays a message out.
viewer_url = no_viewer
