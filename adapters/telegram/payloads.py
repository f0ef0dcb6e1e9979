"""The `sendMessage` parameters Telegram receives: built here once, sent by the adapter
and printed by the previews (`prdigest digest --format telegram`, `post --dry-run`)."""

from __future__ import annotations

import functools
import re
from typing import Any

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    ReplyParameters,
    TelegramObject,
)
from telegram.constants import ParseMode

from adapters.base import no_viewer
from adapters.telegram.render import (
    LinkButton,
    TelegramMessage,
    render_digest_messages,
    render_reply_messages,
)
from bot.models import Digest, Reply

METHOD = "sendMessage"
# Links to PRs would each unfurl into a preview card; the message is the content.
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


def send_arguments(chat: int | str, message: TelegramMessage, *, reply_to: int | None = None,
                   thread_id: int | None = None) -> dict[str, Any]:
    """One message's `send_message` arguments (python-telegram-bot's objects): HTML, no
    link previews, its URL buttons; `reply_to` quotes a question."""
    arguments: dict[str, Any] = {"chat_id": chat, "text": message.text,
                                 "parse_mode": ParseMode.HTML,
                                 "link_preview_options": _NO_PREVIEW}
    keyboard = _keyboard(message.buttons)
    if keyboard is not None:
        arguments["reply_markup"] = keyboard
    if reply_to is not None:
        arguments["reply_parameters"] = ReplyParameters(message_id=reply_to,
                                                        allow_sending_without_reply=True)
    if thread_id is not None:
        arguments["message_thread_id"] = thread_id
    return arguments


@functools.lru_cache(maxsize=1024)
def _keyboard(rows: tuple[tuple[LinkButton, ...], ...]) -> InlineKeyboardMarkup | None:
    """The buttons under a message; PTB's objects are frozen, so one serves every send."""
    if not rows:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(button.label, callback_data=button.action) if button.action
          else InlineKeyboardButton(button.label, url=button.url) for button in row]
         for row in rows]
    )


def chat_id(channel_id: str) -> int | str:
    """A chat id as the Bot API takes it: a number, or an `@channelusername`."""
    return int(channel_id) if re.fullmatch(r"-?\d+", channel_id) else channel_id


def wire_form(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the Bot API request carries them (objects as their JSON)."""
    return {name: value.to_dict() if isinstance(value, TelegramObject) else str(value)
            if isinstance(value, ParseMode) else value
            for name, value in arguments.items()}


def digest_payloads(channel_id: str, digest: Digest, *, key: str | None = None
                    ) -> list[dict[str, Any]]:
    """Every message of a weekly digest, as sent (Telegram takes no idempotency key, so
    `key` changes nothing)."""
    return [wire_form(send_arguments(chat_id(channel_id), message))
            for message in render_digest_messages(digest)]


def reply_payloads(channel_id: str, reply: Reply) -> list[dict[str, Any]]:
    """A reply posted to a chat (a notice, an answer), message by message."""
    return [wire_form(send_arguments(chat_id(channel_id), message))
            for message in render_reply_messages(reply)]

# The platform has no public page that lays a message out.
viewer_url = no_viewer
