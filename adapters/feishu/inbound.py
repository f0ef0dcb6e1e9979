"""Feishu payloads to what the bot was asked, apart from sending.

An `im.message.receive_v1` event becomes a neutral `Question`: where it came from, who
sent it, and its text with the bot's own mentions taken out, ready for the shared
grammar; the answer quotes the message (`reply_to`), the event id is its delivery key.
Also what the SDK's request check leaves to its caller: the header names it expects
(how old a signed request may be is `adapters.webhooks.is_fresh`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from adapters.webhooks import spelled_as
from bot.chat.inbound import Question

# lark-oapi reads these from a plain dict with exactly this spelling; ASGI servers
# hand them over lower-cased, and a missed lookup fails every signature.
TIMESTAMP_HEADER = "X-Lark-Request-Timestamp"
NONCE_HEADER = "X-Lark-Request-Nonce"
SIGNATURE_HEADER = "X-Lark-Signature"
REQUEST_ID_HEADER = "X-Request-Id"
_SDK_HEADERS = (TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER, REQUEST_ID_HEADER)

MESSAGE_EVENT = "im.message.receive_v1"
PLATFORM = "feishu"


def sdk_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The request headers the SDK's verifier reads, under the names it looks up."""
    return spelled_as(headers, _SDK_HEADERS)


def _mentions(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    mentions = message.get("mentions") or []
    return [m for m in mentions if isinstance(m, dict) and isinstance(m.get("key"), str)]


def _open_id(mention: Mapping[str, Any]) -> str | None:
    ids = mention.get("id")
    open_id = ids.get("open_id") if isinstance(ids, dict) else None
    return open_id if isinstance(open_id, str) else None


def bot_mention_keys(mentions: list[dict[str, Any]], bot_open_id: str | None) -> set[str]:
    """The placeholders (`@_user_1`) that stand for the bot.

    With the bot's open_id known, exactly its mentions; without it, mentions Feishu
    marks as a bot's, or failing that every mention - in a group the bot only hears
    messages that mention it, so one of them is the bot.
    """
    if bot_open_id:
        return {m["key"] for m in mentions if _open_id(m) == bot_open_id}
    marked = {m["key"] for m in mentions if m.get("mentioned_type") == "bot"}
    return marked or {m["key"] for m in mentions}


def _post_text(content: Mapping[str, Any]) -> str:
    """The words of a rich-text (`post`) message; `at` elements become their key."""
    document: Any = content
    if "content" not in content:  # a locale-keyed post: {"zh_cn": {...}}
        document = next((v for v in content.values() if isinstance(v, dict)), {})
    lines: list[str] = []
    title = document.get("title")
    if isinstance(title, str) and title.strip():
        lines.append(title)
    for paragraph in document.get("content") or []:
        words: list[str] = []
        for element in paragraph if isinstance(paragraph, list) else []:
            if not isinstance(element, dict):
                continue
            if element.get("tag") in ("text", "a", "md", "code_block"):
                words.append(str(element.get("text") or ""))
            elif element.get("tag") == "at":
                words.append(f" {element.get('user_id') or ''} ")
        lines.append("".join(words))
    return "\n".join(lines)


def message_text(message: Mapping[str, Any], bot_keys: set[str]) -> str:
    """The text of a text or rich-text message without the bot's mentions; other
    message kinds (images, files, stickers) give "" and so the help."""
    try:
        content = json.loads(message.get("content") or "{}")
    except (TypeError, ValueError):
        return ""
    if not isinstance(content, dict):
        return ""
    kind = message.get("message_type")
    if kind == "text":
        text = str(content.get("text") or "")
    elif kind == "post":
        text = _post_text(content)
    else:
        return ""
    # Longest first, so `@_user_1` never eats the start of `@_user_10`.
    for key in sorted(bot_keys, key=len, reverse=True):
        text = re.sub(rf"{re.escape(key)}(?![0-9A-Za-z_])", " ", text)
    return " ".join(text.split())


def question_from_event(payload: Mapping[str, Any], bot_open_id: str | None) -> Question | None:
    """The question in an `im.message.receive_v1` event (schema 2.0), or None when the
    bot should stay silent: another app sent it, or a group message does not mention
    the bot (apps allowed to read every group message receive those too)."""
    header = payload.get("header")
    event = payload.get("event")
    if not isinstance(header, dict) or not isinstance(event, dict):
        return None
    if header.get("event_type") != MESSAGE_EVENT:
        return None
    message = event.get("message")
    sender = event.get("sender")
    if not isinstance(sender, dict):
        sender = {}
    if not isinstance(message, dict) or sender.get("sender_type") not in (None, "user"):
        return None
    event_id, message_id = header.get("event_id"), message.get("message_id")
    chat_id, chat_type = message.get("chat_id"), message.get("chat_type")
    if not all(isinstance(v, str) and v for v in (event_id, message_id, chat_id)):
        return None
    mentions = _mentions(message)
    keys = bot_mention_keys(mentions, bot_open_id)
    if chat_type != "p2p" and not keys:
        return None
    sender_ids = sender.get("sender_id")
    sender_open_id = sender_ids.get("open_id") if isinstance(sender_ids, dict) else None
    return Question(
        platform=PLATFORM,
        channel_id=str(chat_id),
        user_id=sender_open_id if isinstance(sender_open_id, str) else None,
        text=message_text(message, keys),
        delivery_key=str(event_id),
        reply_to=str(message_id),
        direct=chat_type == "p2p",
        raw=dict(payload),
    )
