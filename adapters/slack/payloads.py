"""The `chat.postMessage` arguments Slack receives: built here once, sent by the adapter
and printed by the previews (`prdigest digest --format slack`, `post --dry-run`)."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from adapters.slack.render import SlackMessage, render_digest_messages, render_reply_messages
from bot.models import Digest, Reply

METHOD = "chat.postMessage"
# The metadata event types that mark a part of a weekly digest with its delivery key,
# and a part of a merged-PR notice (or batch of them) with its claim key.
DELIVERY_EVENT = "prdigest_digest"
NOTICE_EVENT = "prdigest_notice"
BLOCK_KIT_BUILDER = "https://app.slack.com/block-kit-builder#"


def post_arguments(channel_id: str, message: SlackMessage, thread_ts: str | None = None, *,
                   metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """One message's `chat.postMessage` arguments: links and media never unfurl."""
    arguments: dict[str, Any] = {"channel": channel_id, **message.as_post(),
                                 "unfurl_links": False, "unfurl_media": False}
    if thread_ts is not None:
        arguments["thread_ts"] = thread_ts
    if metadata is not None:
        arguments["metadata"] = metadata
    return arguments


def delivery_metadata(key: str | None, part: int, parts: int, *,
                      event: str = DELIVERY_EVENT) -> dict[str, Any] | None:
    """What marks part `part` of a digest delivery (or of a notice, `NOTICE_EVENT`), so
    a post in doubt can be looked up in the channel; None without a key."""
    if key is None:
        return None
    return {"event_type": event,
            "event_payload": {"delivery": key, "part": part, "parts": parts}}


def digest_payloads(channel_id: str, digest: Digest, *, key: str | None = None
                    ) -> list[dict[str, Any]]:
    """Every part of a weekly digest, as posted."""
    messages = render_digest_messages(digest)
    return [post_arguments(channel_id, message,
                           metadata=delivery_metadata(key, part, len(messages)))
            for part, message in enumerate(messages)]


def reply_payloads(channel_id: str, reply: Reply, *, key: str | None = None,
                   thread_ts: str | None = None) -> list[dict[str, Any]]:
    """A reply posted to a channel (a notice, an answer), part by part; a notice's
    parts carry its key."""
    messages = render_reply_messages(reply)
    return [post_arguments(channel_id, message, thread_ts,
                           metadata=delivery_metadata(key, part, len(messages),
                                                      event=NOTICE_EVENT))
            for part, message in enumerate(messages)]


def viewer_url(payload: dict[str, Any]) -> str | None:
    """A link that opens the payload's blocks in Slack's Block Kit Builder."""
    blocks = json.dumps({"blocks": payload.get("blocks", [])}, ensure_ascii=False,
                        separators=(",", ":"))
    return BLOCK_KIT_BUILDER + urllib.parse.quote(blocks, safe="")
