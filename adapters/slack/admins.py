"""Whether the person asking may change a Slack chat's settings, as Slack tells it:
the workspace's admins and owners (`users.info`), and the channel's creator
(`conversations.info`). In a direct message the person is the chat's only admin (the
inbox knows that from the question itself). A person's language comes from the same
`users.info` (with `include_locale`) and scope, `users:read`, so it is read here too."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.chat.inbound import Question
from bot.i18n import tag_lang
from bot.models import Lang

logger = logging.getLogger(__name__)


async def is_chat_admin(client: AsyncWebClient, question: Question) -> bool:
    """True for a workspace admin or owner, or the channel's creator; a Slack error
    propagates (the inbox then says it could not tell)."""
    user = question.user_id
    if user is None:
        return False
    found = await client.users_info(user=user)
    person = found.get("user") or {}
    if person.get("is_admin") or person.get("is_owner") or person.get("is_primary_owner"):
        return True
    channel = await client.conversations_info(channel=question.channel_id)
    return bool((channel.get("channel") or {}).get("creator") == user)


async def user_lang(client: AsyncWebClient, user: str) -> Lang | None:
    """`user`'s language from their Slack locale (`bot.i18n.tag_lang`: `zh-CN` -> zh);
    None when Slack gives no locale or cannot be asked (logged; never raises: the
    caller has a language to fall back on)."""
    try:
        found = await client.users_info(user=user, include_locale=True)
    except Exception as exc:
        data = exc.response.data if isinstance(exc, SlackApiError) else None
        reason = data.get("error") if isinstance(data, dict) else None
        logger.info("slack: locale of %s unreadable: %s", user, reason or type(exc).__name__)
        return None
    return tag_lang((found.get("user") or {}).get("locale"))
