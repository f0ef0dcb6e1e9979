"""A merged-PR notice on each platform, as the platform receives it: it says "merged",
names who wrote the PR and the topics of that chat it touched, flags its risks, and links
to the PR exactly once."""

from __future__ import annotations

import html
import json
from typing import Any

from adapters.preview import preview
from testkit.server_support import merged_event, serving, snapshot_pull, webhook_request

# #1212 "[trainer, npu] fix: HCCL timeout during long checkpoint saves" touches the topics
# each example channel follows: Slack npu (and rollout), Telegram trainer, Feishu checkpoint.
FOLLOWED = {"slack": ("npu", "rollout"), "telegram": ("trainer",), "feishu": ("checkpoint",)}
MERGED = {"zh": "已合并：#1212", "en": "Merged: #1212"}


def _text(platform: str, payloads: list[dict[str, Any]]) -> str:
    """What a reader sees, whatever the payload's shape."""
    if platform == "feishu":  # card markdown shows `&#35;` as `#`
        return html.unescape("\n".join(p["payload"]["content"] for p in payloads))
    return json.dumps([p["payload"] for p in payloads], ensure_ascii=False)


async def _merge(app: Any, pull: Any) -> None:
    """GitHub tells the service that `pull` merged."""
    body, headers = webhook_request(merged_event(pull), delivery="d-notice")
    async with serving(app) as http:
        answer = await http.post("/github/webhook", content=body, headers=headers)
    assert answer.status_code == 200


async def test_a_notice_is_a_notice_on_every_platform(
        webhook_app: tuple[Any, dict[str, Any]]) -> None:
    app, adapters = webhook_app
    pull = snapshot_pull(1212)
    await _merge(app, pull)
    for platform, adapter in adapters.items():
        [(channel_id, reply)] = adapter.replies
        assert reply.pull is not None
        payloads = preview(platform, channel_id, reply)
        text = _text(platform, payloads)
        assert MERGED[reply.lang] in text, (platform, text)
        assert str(pull.author) in text
        touched = [t for t in FOLLOWED[platform] if t in reply.pull.topics]
        assert touched and list(reply.topics) == touched
        untouched = [t for t in FOLLOWED[platform] if t not in touched]
        sentence = text[text.index(MERGED[reply.lang]):]
        assert all(f"`{t}`" not in sentence and f">{t}<" not in sentence
                   for t in untouched), (platform, untouched)
        assert ("⚠" in text) == bool(reply.pull.risks)
        # One link to the PR: the platform's button (escaped or not, counted once).
        raw = json.dumps([p["payload"] for p in payloads])
        assert raw.count(pull.url.replace("/", "\\/")) + raw.count(pull.url) == 1, \
            (platform, raw)
