"""A platform's word on how it takes a command (a slash, a mention), said where the
core teaches commands - at the end of help and of the answer to a greeting, before
the buttons - so each platform gives only the sentence."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from bot.models import Lang, Reply
from bot.render.document import Buttons, Document, Line, Paragraph
from bot.render.layouts import reply_document

__all__ = ["hinted_reply_document"]


def hinted_reply_document(reply: Reply, hint: Callable[[Lang], Line]) -> Document:
    """`reply` laid out (`reply_document`), ending in `hint` in its language when it is
    help or the answer to a greeting."""
    document = reply_document(reply)
    if document.kind == "help" or (reply.answer is not None
                                   and reply.answer.question == "hello"):
        document = dataclasses.replace(document, blocks=(
            *document.body(), Paragraph((hint(reply.lang),)),
            *(b for b in document.blocks if isinstance(b, Buttons))))
    return document
