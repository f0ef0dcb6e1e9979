"""Counting what a channel received: one digest, or copies of it, or none; and small
weeks of PRs for any week."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from bot.models import PullRequest
from bot.week import current_week, shift_week, week_period
from testkit.fakes.feishu import FakeFeishu
from testkit.fakes.github_fixtures import build_week
from testkit.fakes.slack import FakeSlack
from testkit.fakes.telegram import FakeTelegram
from testkit.reliability.names import REPO, TZ

FEISHU_UUID_WINDOW = timedelta(hours=1)


def feishu_visible(feishu: FakeFeishu, chat: str) -> list[str]:
    """The cards a Feishu chat shows, as their content: Feishu sends at most one message
    per `uuid` within an hour ("request with the same uuid ... only one message"), so a
    card re-sent with a uuid already accepted is not a second message."""
    seen: set[str] = set()
    shown: list[str] = []
    for card in feishu.sent_cards():
        if card.target != chat:
            continue
        if card.uuid is not None:
            if card.uuid in seen:
                continue
            seen.add(card.uuid)
        shown.append(card.content)
    return shown


@dataclass(frozen=True)
class PostCount:
    """How one channel's weekly digest arrived: times its first message arrived, and
    whether the later parts arrived as often."""

    delivered: int
    duplicated: int
    lost: int
    parts: int


def count_posts(messages: list[str]) -> PostCount:
    """Messages of one channel, in arrival order, that should be one digest: the first
    message is its head; every repeat of the head is one more copy of the digest."""
    if not messages:
        return PostCount(delivered=0, duplicated=0, lost=1, parts=0)
    copies = Counter(messages)
    head = copies[messages[0]]
    return PostCount(delivered=head, duplicated=max(copies.values()) - 1, lost=0,
                     parts=len(copies))


def slack_channel_texts(fake: FakeSlack, channel: str) -> list[str]:
    return [json.dumps(p.get("blocks"), sort_keys=True) + str(p.get("text"))
            for p in fake.posted("chat.postMessage") if p.get("channel") == channel]


def telegram_chat_texts(fake: FakeTelegram, chat: str) -> list[str]:
    """Messages posted to the chat, not those answering a message in it."""
    return [m.get("text", "") for m in fake.sent()
            if m.get("chat_id") == chat and "reply_parameters" not in m]


def previous_week(moment: datetime | None = None, tz: str = TZ) -> str:
    """The ISO week a weekly post made now is about."""
    return shift_week(current_week(moment or datetime.now(UTC), tz), -1)


def week_pulls_for(week: str, repo: str = REPO, *, count: int = 8, seed: int = 3,
                   first_number: int = 1000) -> list[PullRequest]:
    """A small week of PRs for `week` (any week, e.g. last week in real time)."""
    assert week_period(week, TZ)
    return build_week(repo, count=count, week=week, tz=TZ, seed=seed, overflow=None,
                      decoys=0, first_number=first_number)


def structs_replace(value: Any, **changes: Any) -> Any:
    return msgspec.structs.replace(value, **changes)
