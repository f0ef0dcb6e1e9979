"""The chats a reader is in, shown outside any chat, laid out as documents: an opening
(a title, what this is, and - where there is nothing to list - why), then for each chat
its name above its `settings` answer (`reply_document`), and a line for the chats left
out when a platform has no room for them. Words from `templates/document/overview.j2`.

Which chats a reader may see is decided in `bot.chat.overviews`; how many fit, and how
the pieces are put together, is the platform's (its limits, its own view).
"""

from __future__ import annotations

from bot.models import Lang
from bot.render.document import ChatRef, Context, Document, Heading, Paragraph, Text, parse_line
from bot.render.layouts import Words

KIND = "overview"
_TEMPLATE = "document/overview.j2"


def overview_opening(lang: Lang, *, readable: bool, chats: int) -> Document:
    """The title and what it shows; then, when the reader's chats could not be read,
    why nothing is listed, or, when they are in none served, how to begin."""
    w = Words(_TEMPLATE, lang)
    lines = (() if readable and chats else
             (parse_line(w("unreadable" if not readable else "none_yet")),))
    return Document(kind=KIND, lang=lang, title=w("title"), headline=True,
                    notification=w("title"),
                    blocks=(Context((parse_line(w("intro")),)),
                            *((Paragraph(lines),) if lines else ())))


def chat_heading(chat_id: str, lang: Lang, *, direct: bool) -> Document:
    """A chat's name above its settings: the platform's name of the chat, or - the
    reader's direct messages with the bot - said so."""
    line = (Text(Words(_TEMPLATE, lang)("direct_heading")),) if direct else (ChatRef(chat_id),)
    return Document(kind=KIND, lang=lang, title="", blocks=(Heading(line),))


def more_chats(left: int, lang: Lang) -> Document:
    """The line for `left` chats a platform had no room to show."""
    line = parse_line(Words(_TEMPLATE, lang)("more", left))
    return Document(kind=KIND, lang=lang, title="", blocks=(Context((line,)),))
