"""Telegram updates to what was asked: the text, the chat, the user, a language hint.

Which updates are for the bot is decided by python-telegram-bot's own handlers, set up
here as one small table: the bot's commands (`/risks 7035`, `/risks@bot 7035` in a
group), any text in a private chat, and in a group only text that mentions the bot,
replies to it, or is a command addressed to it. Everything else is not ours and is
left alone. Sending the answer lives in `adapters.telegram`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from telegram import Message, MessageEntity, Update
from telegram.ext import BaseHandler, MessageHandler, filters
from telegram.ext import CommandHandler as TelegramCommandHandler

from bot.chat.grammar import DEFAULT_BOT_NAMES, detect_lang, parse_command
from bot.models import Command, Lang

# Commands shown in Telegram's menu; `/start` opens every private chat with a bot.
COMMANDS = ("risks", "summary", "digest", "topics", "subscribe", "unsubscribe", "help")
ACCEPTED_COMMANDS = (*COMMANDS, "start")
ALLOWED_UPDATES = ("message",)


@dataclass(frozen=True, slots=True)
class Inbound:
    """A message the bot should answer, in neutral terms; `update` keeps the raw payload."""

    update_id: int
    chat_id: int
    chat_type: str
    message_id: int
    text: str
    user_id: str | None
    language_code: str | None
    thread_id: int | None
    update: Update

    @property
    def in_group(self) -> bool:
        return self.chat_type != "private"


def inbound_from_update(update: Update) -> Inbound | None:
    """The text message an update carries, or None for anything else (edits, photos,
    channel posts, messages from other bots)."""
    message = update.message
    if message is None or not message.text:
        return None
    sender = message.from_user
    if sender is not None and sender.is_bot:
        return None
    return Inbound(
        update_id=update.update_id,
        chat_id=message.chat.id,
        chat_type=message.chat.type,
        message_id=message.message_id,
        text=message.text,
        user_id=str(sender.id) if sender is not None else None,
        language_code=sender.language_code if sender is not None else None,
        thread_id=message.message_thread_id if message.is_topic_message else None,
        update=update,
    )


def language_of(code: str | None) -> Lang | None:
    """Telegram's IETF language code of the user (`zh-hans`, `en`) as a catalog language."""
    if not code:
        return None
    return "zh" if code.lower().startswith("zh") else "en"


def to_command(inbound: Inbound, *, bot_username: str | None, preferred: Lang) -> Command:
    """The grammar's reading of the message.

    A slash command's verb is always English, so it says nothing about the user's
    language: `/risks 7035` is answered in `preferred` (the channel's language, or the
    user's Telegram language), unless its arguments are Chinese. Free text speaks for
    itself and the grammar detects its language.
    """
    names = (bot_username, *DEFAULT_BOT_NAMES) if bot_username else DEFAULT_BOT_NAMES
    text = inbound.text
    lang: Lang | None = None
    if text.lstrip().startswith("/"):
        arguments = text.strip().partition(" ")[2]
        lang = "zh" if detect_lang(arguments) == "zh" else preferred
    return parse_command(text, lang=lang, default_lang=preferred, bot_names=names)


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
