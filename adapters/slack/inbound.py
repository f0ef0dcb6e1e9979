"""Slack payloads -> one neutral `Question`: who asked what, where, and where to answer.

Parsing lives apart from sending: this module only reads the bodies Bolt has already
verified and parsed (slash commands, Events API callbacks, Socket Mode envelopes) and
decides which of them are questions. A small dispatch table on the payload's type does
it; anything else is not a question and gets no answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from adapters.fields import str_or_none as _str
from bot.chat.inbound import Question

PLATFORM = "slack"
SLASH_COMMAND = "/prdigest"


# A user mention as Slack writes it in message text: `<@U0123>` or `<@U0123|ann>`.
_MENTION = r"<@{user}(?:\|[^>]*)?>"
_ANY_USER = r"[UW][A-Z0-9]+"


def _bot_user(body: Mapping[str, Any]) -> str | None:
    """The bot's own user id, from the delivery's `authorizations` (Events API)."""
    for grant in body.get("authorizations") or ():
        if isinstance(grant, Mapping) and grant.get("is_bot") and _str(grant.get("user_id")):
            return str(grant["user_id"])
    return None


def without_own_mention(text: str, body: Mapping[str, Any]) -> str:
    """The text with the bot's own mentions taken out, so an answer never echoes
    `<@UBOT>` back; without `authorizations`, the mention a text opens with (an
    `app_mention` is addressed to the bot). Other people's mentions stay."""
    bot = _bot_user(body)
    if bot is not None:
        return re.sub(r"\s*" + _MENTION.format(user=re.escape(bot)) + r"\s*", " ", text).strip()
    return re.sub(r"^\s*" + _MENTION.format(user=_ANY_USER), " ", text).strip()


def _slash_command(body: Mapping[str, Any]) -> Question | None:
    """Answers go to the command's `response_url` (see `response_url`)."""
    channel = _str(body.get("channel_id"))
    if body.get("command") != SLASH_COMMAND or channel is None:
        return None
    return Question(
        platform=PLATFORM,
        text=str(body.get("text") or ""),
        channel_id=channel,
        user_id=_str(body.get("user_id")),
        delivery_key=delivery_key(body),
        direct=body.get("channel_name") == "directmessage" or channel.startswith("D"),
        raw=body,
    )


def _app_mention(body: Mapping[str, Any], event: Mapping[str, Any]) -> Question | None:
    channel = _str(event.get("channel"))
    if channel is None or event.get("bot_id"):
        return None
    return Question(
        platform=PLATFORM,
        text=without_own_mention(str(event.get("text") or ""), body),
        channel_id=channel,
        user_id=_str(event.get("user")),
        delivery_key=delivery_key(body),
        # Answer in the thread the mention is in, or start one under it.
        thread=_str(event.get("thread_ts")) or _str(event.get("ts")),
        direct=channel.startswith("D"),
        raw=body,
    )


# Message subtypes a person writes: a message with a file attached, and a thread reply
# also sent to the conversation. Every other subtype (bot_message, message_changed,
# message_deleted, joins...) is not a question.
USER_SUBTYPES = frozenset({"file_share", "thread_broadcast"})


def _message(body: Mapping[str, Any], event: Mapping[str, Any]) -> Question | None:
    """Only messages a person sends the bot directly, with or without a file; edits,
    deletions, joins, bot posts and channel chatter are not questions (mentions in
    channels arrive as `app_mention`)."""
    channel = _str(event.get("channel"))
    subtype = event.get("subtype")
    if (event.get("channel_type") != "im" or channel is None
            or (subtype is not None and subtype not in USER_SUBTYPES)
            or event.get("bot_id") or _str(event.get("user")) is None):
        return None
    return Question(
        platform=PLATFORM,
        text=without_own_mention(str(event.get("text") or ""), body),
        channel_id=channel,
        user_id=_str(event.get("user")),
        delivery_key=delivery_key(body),
        # A reply in a DM thread stays in that thread; a top-level DM gets a top-level answer.
        thread=_str(event.get("thread_ts")),
        direct=True,
        raw=body,
    )


EventReader = Callable[[Mapping[str, Any], Mapping[str, Any]], Question | None]

_EVENT_READERS: dict[str, EventReader] = {
    "app_mention": _app_mention,
    "message": _message,
}


def read_question(body: Mapping[str, Any]) -> Question | None:
    """The question in a verified Slack payload, or None when it holds none."""
    if "command" in body:
        return _slash_command(body)
    if body.get("type") == "event_callback":
        event = body.get("event")
        if isinstance(event, Mapping):
            reader = _EVENT_READERS.get(str(event.get("type")))
            return reader(body, event) if reader else None
    return None


def unheard(body: Mapping[str, Any]) -> tuple[str, bool]:
    """What a verified delivery no listener takes is (`reaction_added`, `app_rate_limited`)
    and whether it is worth a warning: `app_rate_limited` means Slack is dropping this
    app's events for the rest of the minute."""
    event = body.get("event")
    kind = (event.get("type") if isinstance(event, Mapping) else None) or body.get("type")
    name = str(kind)[:40] if kind else "untyped"
    return name, name == "app_rate_limited"


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


def response_url(question: Question) -> str | None:
    """Where a slash command's answer goes (Slack takes a few answers per URL); None for
    mentions and direct messages, which are answered in the channel."""
    body = question.raw
    if not isinstance(body, Mapping) or "command" not in body:
        return None
    return _str(body.get("response_url"))


def foreign_app(body: Mapping[str, Any], team_ids: tuple[str, ...], app_id: str | None
                ) -> str | None:
    """Why a verified payload is not for this app - another workspace (`team_id` not in
    `team_ids`) or another Slack app (`api_app_id` not `app_id`) - or None when it is,
    or when nothing is configured to check. A signing secret shared by mistake between
    apps or workspaces must not make this bot answer for them."""
    team = body.get("team_id")
    if team_ids and team not in team_ids:
        return f"team {str(team)[:24]!r}"
    app = body.get("api_app_id")
    if app_id is not None and app != app_id:
        return f"app {str(app)[:24]!r}"
    return None
