"""A button click read as the command its button carries (`bot.actions`), and where
its answer goes.

A click is answered as if the clicker had typed the command: the same `Inbox`, handler,
permission rules and repository bounds; only the reading differs. The button's data is
untrusted text, so data that is not one of ours gets a polite `unknown-action` reply,
never an exception. The answer is in the clicker's language: the platform's language
for the user where it tells one (the clicker is rarely the one the button was posted
for), else the chat's, else the platform's default.

Where the answer goes is decided here for every platform (`place_answer`): in place of
the message clicked when its button says so - an answer's buttons do, a digest's or a
notice's do not (`bot.render.layouts.is_record`) - the answer is for everyone (a
refusal or help goes beneath, leaving the answer it was asked on) and it is one
message; otherwise, or when the platform refuses the edit (a message too old, gone),
as a new message beneath or replying to the one clicked. A platform gives only its two
calls: replace the message clicked, add messages.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from bot.actions import answers_in_place, decode_action
from bot.models import Command, Lang, Reply
from bot.render.layouts import PRIVATE_KINDS

log = logging.getLogger(__name__)

UNKNOWN_ACTION = "unknown-action"

M = TypeVar("M")


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


def replaces_clicked(action: str | None, reply: Reply) -> bool:
    """Whether `reply`, the answer to a click on a button with data `action` (None:
    not a click), takes the place of the message clicked."""
    return (action is not None and reply.kind not in PRIVATE_KINDS
            and answers_in_place(action))


async def place_answer(action: str | None, reply: Reply, messages: Sequence[M], *,
                       replace: Callable[[M], Awaitable[object]],
                       add: Callable[[Sequence[M]], Awaitable[object]],
                       refused: tuple[type[BaseException], ...]) -> None:
    """Send `reply`'s `messages` where they belong: `replace` puts one message in place
    of the one clicked, `add` sends them as new messages - also when `replace` raised
    one of `refused` (the platform's refusals: the message too old, gone, not the
    bot's). Anything else either raises propagates."""
    if len(messages) == 1 and replaces_clicked(action, reply):
        try:
            await replace(messages[0])
            return
        except refused as refusal:
            log.info("the message clicked was not replaced (%s: %s); its %s answer comes "
                     "beneath it", type(refusal).__name__, refusal, reply.kind)
    await add(messages)
