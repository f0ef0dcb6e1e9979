"""What a channel would receive, before it does: the exact requests a platform's adapter
sends (`prdigest digest --format slack`, `ask --format telegram`, `post --dry-run`)."""

from __future__ import annotations

import json
from typing import Any

from adapters.registry import PLATFORMS, platform_spec
from bot.errors import UserError
from bot.models import Digest, Reply

PREVIEW_PLATFORMS: tuple[str, ...] = tuple(spec.name for spec in PLATFORMS)
# The channel named in a preview when the config lists none of that platform.
PLACEHOLDER_CHANNEL = "CHANNEL_ID"


def preview(platform: str, channel_id: str, content: Digest | Reply, *,
            key: str | None = None) -> list[dict[str, Any]]:
    """Each request the platform would get, in order: `{"method", "payload"}`, and a
    `viewer` link where the platform has a page that lays a payload out (Slack's Block
    Kit Builder). A digest is shown as delivered with the delivery key `key` (Slack's
    metadata, Feishu's `uuid` are made from it)."""
    spec = platform_spec(platform)
    if spec is None:
        raise UserError(f"{platform} is not a chat platform prdigest posts to")
    builder = spec.payload_builder()
    payloads = (builder.digest_payloads(channel_id, content, key=key)
                if isinstance(content, Digest) else builder.reply_payloads(channel_id, content))
    parts: list[dict[str, Any]] = []
    for payload in payloads:
        part: dict[str, Any] = {"method": builder.METHOD, "payload": payload}
        viewer = builder.viewer_url(payload)
        if viewer is not None:
            part["viewer"] = viewer
        parts.append(part)
    return parts


def preview_json(platform: str, channel_id: str, content: Digest | Reply, *,
                 key: str | None = None) -> str:
    """The preview as indented JSON, non-ASCII text kept readable."""
    return json.dumps(preview(platform, channel_id, content, key=key), ensure_ascii=False,
                      indent=2) + "\n"
