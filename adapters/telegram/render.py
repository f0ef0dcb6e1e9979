"""`Document` -> Telegram messages: HTML parse mode text plus an inline keyboard (links,
and buttons whose `callback_data` is a chat command).

The core lays the digest or reply out (`bot.render.layouts`); this module encodes it
in `TelegramMarkup` and cuts it into messages Telegram accepts. Telegram counts a
message's length after parsing its HTML (tags don't count, an entity counts as one
character), at most 4096; we count UTF-16 code units, which is never less than what
Telegram counts. Parts are separated by a blank line and split with the shared
`bot.render.html_split`; a tag never spans a line, so a cut at a line end never lands
inside one.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from adapters.telegram import TEMPLATES
from adapters.telegram.markup import TelegramMarkup
from bot.i18n import translator
from bot.models import Digest, Reply
from bot.render import html_split
from bot.render.document import (
    Button,
    Document,
    Item,
    Items,
    Line,
    Text,
    inline,
)
from bot.render.hints import with_usage_hint
from bot.render.layouts import digest_document, reply_document
from bot.render.memo import reply_memo
from bot.render.text_form import TextForm, document_text

MAX_MESSAGE_CHARS = 4096
BUTTONS_PER_ROW = 2

_TAG = re.compile(r"<[^>]*>")
_HTTP_URL = re.compile(r"https?://\S+", re.I)
# A line that is only a bold heading, as the templates write section titles.
_HEADING = re.compile(r"<b>[^<>\n]*</b>")


@dataclass(frozen=True, slots=True)
class LinkButton:
    """An inline keyboard button: it opens `url`, or sends `action` back as its
    `callback_data` (`bot.actions`)."""

    label: str
    url: str = ""
    action: str = ""


@dataclass(frozen=True, slots=True)
class TelegramMessage:
    """One `sendMessage`: HTML text and rows of URL buttons under it."""

    text: str
    buttons: tuple[tuple[LinkButton, ...], ...] = ()


def visible_length(text: str) -> int:
    """What Telegram counts against its limit: the text without tags, entities decoded,
    in UTF-16 code units (an emoji outside the BMP counts two)."""
    plain = html.unescape(_TAG.sub("", text))
    return len(plain.encode("utf-16-le")) // 2


def split_html(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """HTML cut into messages of at most `limit` visible characters, at section
    boundaries (blank lines) first, then at line ends; never inside a tag or entity,
    never ending on a section heading (`bot.render.html_split`)."""
    return html_split.split_html(text, limit, visible_length, heading=_HEADING)


def _button_rows(buttons: list[LinkButton]) -> tuple[tuple[LinkButton, ...], ...]:
    return tuple(
        tuple(buttons[i : i + BUTTONS_PER_ROW]) for i in range(0, len(buttons), BUTTONS_PER_ROW)
    )


def _keyboard_button(button: Button) -> LinkButton | None:
    """A link (only to http(s): anything else would be refused or unsafe), or a button
    whose `callback_data` is its action."""
    if button.action:
        return LinkButton(label=button.label, action=button.action)
    target = button.url.strip()
    return LinkButton(label=button.label, url=target) if _HTTP_URL.fullmatch(target) else None


_MARKUP = TelegramMarkup()


def _line(line: Line) -> str:
    return inline(line, _MARKUP)


def _heading(line: Line) -> str:
    return f"<b>{_line(line).replace(chr(10), ' ')}</b>"


def _item_link(item: Item) -> str | None:
    """Where an item's own link button points, when the item's opening words can carry
    the link themselves (an http(s) link, and no link inside them): on a phone a
    keyboard of a button per key PR buries the buttons that act, so the line links."""
    button = item.button
    if button is None or button.action or not _HTTP_URL.fullmatch(button.url.strip()):
        return None
    if not item.line or "<a " in _line(item.line[:1]):
        return None
    return button.url.strip()


def _item_line(item: Item) -> str:
    """The item's line, its opening words (a key PR's number and title) linking to
    where its button would."""
    url = _item_link(item)
    if url is None:
        return _line(item.line)
    opening = f'<a href="{html.escape(url, quote=True)}">{_line(item.line[:1])}</a>'
    return opening + _line(item.line[1:])


# Blocks as HTML lines: a heading in bold, `• ` items (a key PR's opening words its
# link), small print in italics.
_FORM = TextForm(_MARKUP, heading=_heading, bullet="• ", context="<i>{}</i>", item=_item_line)


def document_html(document: Document) -> str:
    """The document as one HTML text, before splitting (`bot.render.text_form`): a
    blank line between its parts, where a long message is split first."""
    return document_text(document, _FORM)


def encode(document: Document, *, limit: int = MAX_MESSAGE_CHARS) -> list[TelegramMessage]:
    """A document as Telegram messages, its buttons under the last one, where the reader
    ends; a key PR's link is its line's, not a button (`_item_link`)."""
    unlinked = tuple(item.button for block in document.blocks if isinstance(block, Items)
                     for item in block.items
                     if item.button is not None and _item_link(item) is None)
    buttons = [_keyboard_button(b) for b in (*unlinked, *document.buttons())]
    parts_ = split_html(document_html(document), limit)
    rows = _button_rows([b for b in buttons if b is not None])
    messages = [TelegramMessage(text=part) for part in parts_]
    if messages and rows:
        messages[-1] = TelegramMessage(text=messages[-1].text, buttons=rows)
    return messages


def render_digest_messages(
    digest: Digest, *, limit: int = MAX_MESSAGE_CHARS
) -> list[TelegramMessage]:
    """The weekly digest as Telegram messages."""
    return encode(digest_document(digest), limit=limit)


def _render_reply_messages(
    reply: Reply, *, limit: int = MAX_MESSAGE_CHARS
) -> list[TelegramMessage]:
    """A chat reply as Telegram messages; in help, how Telegram takes a command."""
    if reply.kind == "digest" and reply.digest is not None:
        return render_digest_messages(reply.digest, limit=limit)
    return encode(with_usage_hint(reply, reply_document(reply), lambda: _slash_hint(reply)),
                  limit=limit)


def _slash_hint(reply: Reply) -> Line:
    """How Telegram takes a command: with a slash; in a group, a mention or a reply."""
    t = translator(reply.lang, (TEMPLATES,))
    number = dict(reply.params).get("example_pull", "123")
    return (Text(t("In Telegram a command also works with a slash: /risks %(number)s, "
                   "/digest, /topics, /help; in a group, mention me or reply to me.",
                   number=number)),)


render_reply_messages = reply_memo(_render_reply_messages)


def render_digest_html(digest: Digest) -> str:
    """The whole chat digest as one HTML text, before splitting."""
    return document_html(digest_document(digest))
