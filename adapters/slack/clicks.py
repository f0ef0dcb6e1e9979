"""Slack button clicks (`block_actions`) -> one neutral `Question` carrying the action.

Bolt has verified the request (the same v0 signature as events and slash commands) and
parsed its form-encoded `payload=` JSON before this module sees it. A button of ours is
named `prdigest.<what>` (`adapters.slack.render.ACTION_PREFIX`); one that acts carries
its command in `value` (`bot.actions`), one that only opens a link has none and is only
acknowledged. The answer goes to the click's `response_url`: in place of the message
clicked (`replace_original`) or under it, as `bot.chat.clicks.place_answer` says (an
error only to the clicker).

Slack never re-sends a click, but one click may reach two replicas (Socket Mode's
reconnects), so each has a delivery key: its `trigger_id`, else the user and the
action's `action_ts`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from adapters.fields import mapping as _map
from adapters.fields import str_or_none as _str
from adapters.slack.admins import user_lang
from bot.chat.inbound import Question
from bot.i18n import tag_lang

PLATFORM = "slack"
# Slack's own limits are far smaller; an action value longer than this is not ours.
MAX_VALUE_CHARS = 2000


def clicked_action(body: Mapping[str, Any], prefix: str) -> Mapping[str, Any] | None:
    """The button of ours a `block_actions` payload says was clicked, or None."""
    if body.get("type") != "block_actions":
        return None
    actions = body.get("actions")
    if not isinstance(actions, list) or not actions:
        return None
    action = _map(actions[0])
    action_id = _str(action.get("action_id"))
    if action_id is None or not action_id.startswith(prefix):
        return None
    return action


def team_of(body: Mapping[str, Any]) -> str | None:
    """The workspace an interactivity payload comes from (`team.id`, not `team_id`)."""
    return _str(_map(body.get("team")).get("id")) or _str(body.get("team_id"))


def question_from_click(body: Mapping[str, Any], prefix: str) -> Question | None:
    """The question a click on one of our acting buttons asks, or None (a link button,
    a payload without a channel, someone else's button)."""
    action = clicked_action(body, prefix)
    if action is None:
        return None
    value = action.get("value")
    if not isinstance(value, str) or action.get("url"):
        return None  # a link button: Slack opened the link, nothing to answer
    channel = _str(_map(body.get("channel")).get("id")) \
        or _str(_map(body.get("container")).get("channel_id"))
    if channel is None:
        return None
    user = _map(body.get("user"))
    container = _map(body.get("container"))
    message = _map(body.get("message"))
    return Question(
        platform=PLATFORM,
        channel_id=channel,
        user_id=_str(user.get("id")),
        text="",
        action=value[:MAX_VALUE_CHARS],
        delivery_key=click_key(body, action),
        thread=_str(container.get("thread_ts")) or _str(message.get("thread_ts"))
        or _str(container.get("message_ts")),
        user_lang=tag_lang(user.get("locale")),
        direct=channel.startswith("D"),
        raw=dict(body),
    )


def click_key(body: Mapping[str, Any], action: Mapping[str, Any]) -> str | None:
    """One click's key: its `trigger_id`, else who clicked and when."""
    trigger = _str(body.get("trigger_id"))
    if trigger is not None:
        return f"click:{trigger}"
    user, stamp = _str(_map(body.get("user")).get("id")), _str(action.get("action_ts"))
    return f"click:{user}:{stamp}" if user and stamp else None


def clicked_message(question: Question) -> str | None:
    """The `ts` of the message whose button was clicked."""
    body = question.raw
    if not isinstance(body, Mapping):
        return None
    return _str(_map(body.get("container")).get("message_ts")) \
        or _str(_map(body.get("message")).get("ts"))


def click_response_url(question: Question) -> str | None:
    """Where a click's answer goes: the `response_url` of its payload."""
    body = question.raw
    return _str(body.get("response_url")) if isinstance(body, Mapping) else None


async def with_clicker_lang(client: AsyncWebClient, question: Question) -> Question:
    """The click with its clicker's language: a click's payload has no locale, so
    Slack is asked (`adapters.slack.admins.user_lang`); when it cannot tell, the chat's
    language is used."""
    if question.user_lang is not None or question.user_id is None:
        return question
    lang = await user_lang(client, question.user_id)
    return question if lang is None else dataclasses.replace(question, user_lang=lang)
