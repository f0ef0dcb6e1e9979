"""Whether the person asking may change a Telegram chat's settings, as Telegram tells
it (`getChatMember`): the group's creator and administrators. A group admin posting
anonymously speaks as the group, so is one; in a private chat the person is the chat's
only admin (the inbox knows that from the question itself)."""

from __future__ import annotations

from telegram import Bot, Update

from adapters.telegram.inbound import is_anonymous_admin
from bot.chat.inbound import Question

ADMIN_STATUSES = frozenset({"creator", "administrator"})


async def is_chat_admin(bot: Bot, question: Question) -> bool:
    """True for the chat's creator or an administrator; a Telegram error propagates."""
    update = question.raw
    if isinstance(update, Update) and update.message is not None and \
            is_anonymous_admin(update.message):
        return True
    if question.user_id is None:
        return False
    member = await bot.get_chat_member(chat_id=question.channel_id,
                                       user_id=int(question.user_id))
    return member.status in ADMIN_STATUSES
