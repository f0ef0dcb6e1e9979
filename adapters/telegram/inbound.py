"""Telegram updates to a neutral `Question`: the text, the chat, the user, a language hint.

Which updates are for the bot is decided by python-telegram-bot's own handlers, set up
here as one small table: the bot's commands (`/risks 7035`, `/risks@bot 7035` in a
group), any text in a private chat, and in a group only text that mentions the bot,
replies to it, or is a command addressed to it. Everything else is not ours and is
left alone. Sending the answer lives in `adapters.telegram.adapter`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from telegram import Message, MessageEntity, Update
from telegram.ext import BaseHandler, MessageHandler, filters
from telegram.ext import CommandHandler as TelegramCommandHandler

from bot.chat.inbound import Question
from bot.i18n import tag_lang

PLATFORM = "telegram"

# Commands shown in Telegram's menu; `/start` opens every private chat with a bot.
COMMANDS = ("risks", "summary", "digest", "topics", "subscribe", "unsubscribe", "pending",
            "follow", "unfollow", "schedule", "timezone", "lang", "mute", "unmute", "settings",
            "help")
ACCEPTED_COMMANDS = (*COMMANDS, "start")
# Messages, and clicks on the buttons of the bot's messages (`adapters.telegram.clicks`).
ALLOWED_UPDATES = ("message", "callback_query")


def question_from_update(update: Update, *, bot_id: int) -> Question | None:
    """The text message an update carries, or None for anything else (edits, photos,
    channel posts, messages from other bots). The delivery key is the bot's id and the
    `update_id`; an answer in a group quotes the question, in a forum topic stays there."""
    message = update.message
    if message is None or not message.text:
        return None
    sender = message.from_user
    anonymous_admin = is_anonymous_admin(message)
    if sender is not None and sender.is_bot and not anonymous_admin:
        return None
    if anonymous_admin:
        # The group speaks, not a person: no user id to check admin rights against, no
        # language to go by.
        sender = None
    in_group = message.chat.type != "private"
    thread_id = message.message_thread_id if message.is_topic_message else None
    return Question(
        platform=PLATFORM,
        channel_id=str(message.chat.id),
        user_id=str(sender.id) if sender is not None else None,
        text=message.text,
        delivery_key=f"{bot_id}:{update.update_id}",
        thread=None if thread_id is None else str(thread_id),
        reply_to=str(message.message_id) if in_group else None,
        user_lang=tag_lang(sender.language_code if sender is not None else None),
        # A command's verb (`/risks`) is English whatever the user speaks.
        fixed_verb=message.text.lstrip().startswith("/"),
        direct=not in_group,
        raw=update,
    )


def is_anonymous_admin(message: Message) -> bool:
    """A group admin posting anonymously: Telegram names `GroupAnonymousBot` (a bot) as
    the sender and the group itself as `sender_chat`. A channel's automatic forward
    also has a `sender_chat`, but another chat's."""
    sender_chat = message.sender_chat
    return sender_chat is not None and sender_chat.id == message.chat.id


class _AddressedToBot(filters.MessageFilter):
    """A group message meant for the bot: it @mentions it, replies to one of its
    messages, or is a command with its `@name`. Usernames compare case-insensitively,
    as Telegram resolves them (PTB's `filters.Mention` compares them exactly)."""

    __slots__ = ("_bot_id", "_username")

    def __init__(self, bot_id: int, username: str) -> None:
        super().__init__(name="addressed_to_bot")
        self._bot_id = bot_id
        self._username = username.lower()

    def filter(self, message: Message) -> bool:
        replied = message.reply_to_message
        if replied is not None and replied.from_user is not None \
                and replied.from_user.id == self._bot_id:
            return True
        mentions = message.parse_entities([MessageEntity.MENTION, MessageEntity.BOT_COMMAND])
        for entity, text in mentions.items():
            if entity.type == MessageEntity.MENTION and text[1:].lower() == self._username:
                return True
            if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
                _, _, target = text.partition("@")
                if target.lower() == self._username:
                    return True
        return False


OnInbound = Callable[[Update, Any], Coroutine[Any, Any, None]]


def message_handlers(callback: OnInbound, *, bot_id: int, username: str) -> list[BaseHandler[
        Update, Any, None]]:
    """The dispatch table, first match wins: our commands, private text, group text
    addressed to the bot. Only new messages: an edit is not asked twice."""
    new_text = filters.UpdateType.MESSAGE & filters.TEXT
    return [
        TelegramCommandHandler(list(ACCEPTED_COMMANDS), callback,
                               filters=filters.UpdateType.MESSAGE),
        MessageHandler(new_text & filters.ChatType.PRIVATE, callback),
        MessageHandler(new_text & filters.ChatType.GROUPS & _AddressedToBot(bot_id, username),
                       callback),
    ]
