"""A platform's line on how a command is typed there (a slash command, a mention, a
direct message), which the replies that tell how to use the bot carry: help, and the
answer to a hello. Which replies those are, and where the line goes - after the body,
before the buttons - is the same on every platform; only the line is the platform's."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from bot.models import Reply
from bot.render.document import Buttons, Document, Line, Paragraph


def tells_usage(reply: Reply, document: Document) -> bool:
    """Whether `document`, laid out for `reply`, tells how to use the bot."""
    return document.kind == "help" or (reply.answer is not None
                                       and reply.answer.question == "hello")


def with_usage_hint(reply: Reply, document: Document, hint: Callable[[], Line]) -> Document:
    """`document` with the platform's `hint()` after its body where it tells how to use
    the bot (`tells_usage`); any other document as it is."""
    if not tells_usage(reply, document):
        return document
    return dataclasses.replace(document, blocks=(
        *document.body(), Paragraph((hint(),)),
        *(b for b in document.blocks if isinstance(b, Buttons))))
