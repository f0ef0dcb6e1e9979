"""Whether the person asking may change a Slack chat's settings, as Slack tells it:
the workspace's admins and owners (`users.info`), and the channel's creator
(`conversations.info`). In a direct message the person is the chat's only admin (the
inbox knows that from the question itself)."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.chat.inbound import Question


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
