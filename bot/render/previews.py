"""A pasted PR link's preview laid out as a document: the PR linked with its title and
state, then who wrote it, its type and topics, in one paragraph; its risks in small
print, the first few listed and the rest counted with the command that lists them. The
sentences are those of the chat's `summary` and `risks for #N` answers
(`templates/document/preview.j2`); which links get a preview is `bot.chat.previews`'s.
"""

from __future__ import annotations

from bot.models import Reply
from bot.render.document import Context, Document, Paragraph, parse_line
from bot.render.layouts import Words

RISKS_SHOWN = 3
"""Risks a preview lists; the rest are counted, with the command that lists them."""


def preview_document(reply: Reply, author: str | None) -> Document:
    """The preview of the PR of `reply` (the chat's `pull` answer about it) by
    `author`."""
    w = Words("document/preview.j2", reply.lang, reply=reply, author=author or "")
    head = tuple(parse_line(text) for text in (w("heading"), w("facts")) if text)
    risks = tuple(parse_line(line) for line in w("risks", RISKS_SHOWN).split("\n")
                  if line.strip())
    title = w.line_text("heading")
    return Document(kind="preview", lang=reply.lang, title=title, notification=title,
                    blocks=(*((Paragraph(head),) if head else ()),
                            *((Context(risks),) if risks else ())))
