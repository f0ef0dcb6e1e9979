"""A button click read as the command its button carries (`bot.actions`).

A click is answered as if the clicker had typed the command: the same `Inbox`, handler,
permission rules and repository bounds; only the reading differs. The button's data is
untrusted text, so data that is not one of ours gets a polite `unknown-action` reply,
never an exception. The answer is in the clicker's language: the platform's language
for the user where it tells one (the clicker is rarely the one the button was posted
for), else the chat's, else the platform's default.
"""

from __future__ import annotations

import logging

from bot.actions import decode_action
from bot.models import Command, Lang, Reply

log = logging.getLogger(__name__)

UNKNOWN_ACTION = "unknown-action"


def clicker_lang(user_lang: Lang | None, chat_lang: Lang | None, default: Lang) -> Lang:
    """The language a click is answered in: the clicker's, the chat's, the default."""
    return user_lang or chat_lang or default


def command_of_click(data: str, *, lang: Lang) -> Command | Reply:
    """The command a clicked button's `data` runs, or the polite refusal of data that
    is not a well-formed action of ours (forged, from an older release, truncated)."""
    command = decode_action(data, lang=lang)
    if command is None:
        log.info("click with unreadable action data (%d bytes) refused", len(data.encode()))
        return Reply(kind="error", lang=lang, error=UNKNOWN_ACTION)
    return command
