"""Slack payloads -> one neutral question: who asked what, where, and where to answer.

Parsing lives apart from sending: this module only reads the bodies Bolt has already
verified and parsed (slash commands, Events API callbacks, Socket Mode envelopes) and
decides which of them are questions. A small dispatch table on the payload's type does
it; anything else is not a question and gets no answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Origin = Literal["command", "mention", "direct"]

SLASH_COMMAND = "/prdigest"


@dataclass(frozen=True, kw_only=True)
class SlackQuestion:
    """A question asked in Slack, before the grammar reads it.

    `channel_id` is where it was asked (`C…`, `G…`, or `D…` for a direct message);
    answers go to `response_url` for slash commands, else to the channel, in the
    thread of `thread_ts` when there is one. `raw` keeps the payload for debugging.
    """

    origin: Origin
    text: str
    channel_id: str
    user_id: str | None
    team_id: str | None = None
    response_url: str | None = None
    thread_ts: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _slash_command(body: Mapping[str, Any]) -> SlackQuestion | None:
    channel = _str(body.get("channel_id"))
    if body.get("command") != SLASH_COMMAND or channel is None:
        return None
    return SlackQuestion(
        origin="command",
        text=str(body.get("text") or ""),
        channel_id=channel,
        user_id=_str(body.get("user_id")),
        team_id=_str(body.get("team_id")),
        response_url=_str(body.get("response_url")),
        raw=body,
    )


def _app_mention(body: Mapping[str, Any], event: Mapping[str, Any]) -> SlackQuestion | None:
    channel = _str(event.get("channel"))
    if channel is None or event.get("bot_id"):
        return None
    return SlackQuestion(
        origin="mention",
        text=str(event.get("text") or ""),
        channel_id=channel,
        user_id=_str(event.get("user")),
        team_id=_str(body.get("team_id")),
        # Answer in the thread the mention is in, or start one under it.
        thread_ts=_str(event.get("thread_ts")) or _str(event.get("ts")),
        raw=body,
    )


def _message(body: Mapping[str, Any], event: Mapping[str, Any]) -> SlackQuestion | None:
    """Only plain messages a person sends the bot directly; edits, joins, bot posts and
    channel chatter are not questions (mentions in channels arrive as `app_mention`)."""
    channel = _str(event.get("channel"))
    if (event.get("channel_type") != "im" or channel is None or event.get("subtype")
            or event.get("bot_id") or _str(event.get("user")) is None):
        return None
    return SlackQuestion(
        origin="direct",
        text=str(event.get("text") or ""),
        channel_id=channel,
        user_id=_str(event.get("user")),
        team_id=_str(body.get("team_id")),
        # A reply in a DM thread stays in that thread; a top-level DM gets a top-level answer.
        thread_ts=_str(event.get("thread_ts")),
        raw=body,
    )


EventReader = Callable[[Mapping[str, Any], Mapping[str, Any]], SlackQuestion | None]

_EVENT_READERS: dict[str, EventReader] = {
    "app_mention": _app_mention,
    "message": _message,
}


def read_question(body: Mapping[str, Any]) -> SlackQuestion | None:
    """The question in a verified Slack payload, or None when it holds none."""
    if "command" in body:
        return _slash_command(body)
    if body.get("type") == "event_callback":
        event = body.get("event")
        if isinstance(event, Mapping):
            reader = _EVENT_READERS.get(str(event.get("type")))
            return reader(body, event) if reader else None
    return None


def delivery_key(body: Mapping[str, Any]) -> str | None:
    """What identifies one delivery across Slack's retries: the Events API `event_id`,
    or a slash command's `trigger_id`. None for payloads that are never re-sent."""
    event_id = _str(body.get("event_id"))
    if event_id is not None:
        return f"event:{event_id}"
    if "command" in body:
        trigger = _str(body.get("trigger_id"))
        return f"command:{trigger}" if trigger else None
    return None
