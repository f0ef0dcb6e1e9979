"""Telegram button clicks (`callback_query`) -> one neutral `Question` carrying the action.

A button that acts carries its command in `callback_data` (`bot.actions`, within
Telegram's 64 bytes). The click arrives as a `callback_query` update, through the same
webhook and secret token as messages (or long polling); Telegram shows a spinner on the
button until the bot answers the query (`answerCallbackQuery`, once); the answer itself
replaces the message clicked (`editMessageText`) or replies to it, in its forum topic,
as `bot.chat.clicks.place_answer` says. The clicker's language is Telegram's
`language_code` for them.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from telegram import Message, Update
from telegram.ext import BaseHandler, CallbackQueryHandler

from adapters.telegram.inbound import PLATFORM
from bot.chat.inbound import Question
from bot.i18n import tag_lang

# A click's data is at most 64 bytes; anything longer did not come through Telegram.
MAX_DATA_CHARS = 256


def question_from_click(update: Update, *, bot_id: int) -> Question | None:
    """The question a click on a button with `callback_data` asks, or None (a game's
    button, an inline message with no chat, a message too old for Telegram to show)."""
    query = update.callback_query
    if query is None or not isinstance(query.data, str):
        return None
    message = query.message
    if not isinstance(message, Message):  # inaccessible, or an inline message's button
        return None
    clicker = query.from_user
    in_group = message.chat.type != "private"
    thread_id = message.message_thread_id if message.is_topic_message else None
    return Question(
        platform=PLATFORM,
        channel_id=str(message.chat.id),
        user_id=str(clicker.id),
        text="",
        action=query.data[:MAX_DATA_CHARS],
        delivery_key=f"{bot_id}:click:{query.id}",
        thread=None if thread_id is None else str(thread_id),
        reply_to=str(message.message_id),
        user_lang=tag_lang(clicker.language_code),
        direct=not in_group,
        raw=update,
    )


OnClick = Callable[[Update, Any], Coroutine[Any, Any, None]]


def click_handlers(callback: OnClick) -> list[BaseHandler[Update, Any, None]]:
    """Every click on a button with `callback_data` (what it says is read later)."""
    return [CallbackQueryHandler(callback)]
