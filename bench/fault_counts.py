"""What `bench/faults.py` counts in a run: the weekly posts of the four channels
(each once, chat answers before them left out), responses 5xx, and the questions and
passes that drive the service."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from bench.fault_rows import Row
from testkit.reliability.harness import Service
from testkit.reliability.names import (
    FEISHU_CHAT,
    SLACK_CHANNEL,
    SLACK_VAULT_CHANNEL,
    TELEGRAM_CHAT,
)
from testkit.reliability.posts import (
    count_posts,
    feishu_visible,
    slack_channel_texts,
    telegram_chat_texts,
)
from testkit.schedule import tick_at

MONDAY = datetime(2026, 7, 20, 1, 5, tzinfo=UTC)  # every channel's W29 post is due


_MARKS: dict[int, dict[str, int]] = {}


def mark(service: Service) -> None:
    """Remember how many messages each channel had before the weekly posts began, so
    answers to chat questions asked there before are not counted as posts."""
    if id(service) in _MARKS:
        return
    w = service.world
    _MARKS[id(service)] = {
        "slack": len(slack_channel_texts(w.slack, SLACK_CHANNEL)),
        "vault": len(slack_channel_texts(w.slack, SLACK_VAULT_CHANNEL)),
        "telegram": len(telegram_chat_texts(w.telegram, TELEGRAM_CHAT)),
        "feishu": len(feishu_visible(w.feishu, FEISHU_CHAT)),
    }


def _channel_posts(service: Service) -> dict[str, tuple[int, int, int]]:
    w = service.world
    marks = _MARKS.pop(id(service), {})
    messages = {
        "slack": slack_channel_texts(w.slack, SLACK_CHANNEL),
        "vault": slack_channel_texts(w.slack, SLACK_VAULT_CHANNEL),
        "telegram": telegram_chat_texts(w.telegram, TELEGRAM_CHAT),
        "feishu": feishu_visible(w.feishu, FEISHU_CHAT),
    }
    counts = {k: count_posts(v[marks.get(k, 0):]) for k, v in messages.items()}
    return {k: (c.delivered, c.duplicated, c.lost) for k, c in counts.items()}


def add_posts(row: Row, service: Service) -> None:
    """The weekly posts of the four channels: each once, counted after `tick` marked
    where chat answers end."""
    for delivered, duplicated, lost in _channel_posts(service).values():
        row.expected += 1
        row.delivered += min(delivered, 1)
        row.duplicated += duplicated
        row.lost += lost


def bad_responses(service: Service) -> int:
    """Responses 5xx, but /healthz's 503 while Redis is down: that one is the signal."""
    return sum(r.status_code >= 500 and r.request.url.path != "/healthz"
               for r in service.responses)


async def ask_everywhere(service: Service, text: str) -> list[str]:
    """The question on each platform; the answers' text."""
    return [json.dumps(await service.slack(text), ensure_ascii=False),
            json.dumps(await service.telegram(text), ensure_ascii=False),
            json.dumps(await service.feishu(text), ensure_ascii=False)]


async def tick(service: Service, at: datetime = MONDAY) -> dict[str, str]:
    assert service.services.process.scheduler is not None
    mark(service)
    return {r.channel: r.status for r in await tick_at(service.services.process.scheduler, at)}
