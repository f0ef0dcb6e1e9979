"""`Document` -> Feishu interactive cards (card JSON 2.0): the core lays a digest or
reply out (`bot.render.layouts`), this module encodes it, escaping in `FeishuMarkup`
(`adapters.feishu.markup`).
Feishu refuses a card message whose request body exceeds 30 KB (error 230025), so the
size measured is the byte length of the body the SDK sends - the card serialised into
a JSON string field of a JSON object - and a long digest becomes several cards, split
at section boundaries by the shared splitter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from adapters.feishu.markup import FeishuMarkup
from bot.models import Digest, Reply, Risk
from bot.render import split_sections
from bot.render.document import Button as DocButton
from bot.render.document import (
    Document,
    Line,
    Strong,
    Text,
    inline,
    parts,
)
from bot.render.layouts import digest_document, reply_document, worst
from bot.render.memo import reply_memo
from bot.render.text_form import TextForm, block_text

Card = dict[str, Any]

# "Card and post messages: request body at most 30 KB" (im/v1 message error 230025).
MAX_REQUEST_BYTES = 30 * 1024
# Sections travel through the splitter joined by this; control characters never
# survive escaping, so no text can contain it.
SECTION_BREAK = "\x1e"
# Key PRs that get a button of their own under the digest.
KEY_PULL_BUTTONS = 3
# The measured body carries ids at least as long as any real one, so a card that fits
# the measure fits whatever chat or message it is sent to.
_ID_ALLOWANCE = "x" * 64
_UUID_ALLOWANCE = "x" * 50
# A document's tone as the header's colour.
_COLOURS: dict[str, str] = {"high": "red", "medium": "orange", "low": "blue",
                            "clear": "green", "info": "blue", "done": "green",
                            "quiet": "grey"}


@dataclass(frozen=True)
class Button:
    """A card button: it opens `url`, or calls back with `action` (`bot.actions`)."""

    label: str
    url: str = ""
    primary: bool = False
    action: str = ""


@dataclass(frozen=True)
class CardFrame:
    """What every card of one message shares: header, colour, summary, buttons."""

    title: str
    subtitle: str
    template: str
    buttons: tuple[Button, ...] = ()
    # The title of a card of several: "%(title)s (%(part)s/%(parts)s)" in its language.
    part_title: str = "%(title)s (%(part)s/%(parts)s)"


def header_template(risks: Iterable[Risk]) -> str:
    """Header colour by the worst risk: red for high, orange for medium, blue for low,
    green when nothing was found."""
    return _COLOURS[worst(risks)]


def card_content(card: Card) -> str:
    """The card as the `content` string of a message request: compact, UTF-8 as is."""
    return json.dumps(card, ensure_ascii=False, separators=(",", ":"))


def request_bytes(card: Card) -> int:
    """Bytes of the create-message body carrying `card`, serialised the way lark-oapi
    does (`json.dumps(..., ensure_ascii=False)`), with worst-case ids."""
    body = {
        "receive_id": _ID_ALLOWANCE,
        "msg_type": "interactive",
        "content": card_content(card),
        "uuid": _UUID_ALLOWANCE,
    }
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8"))


def _is_web_url(url: str) -> bool:
    return url.startswith(("https://", "http://")) and not any(c.isspace() for c in url)


def _button(button: Button) -> Card:
    """A card 2.0 button: `open_url`, or a `callback` whose value Feishu sends back in
    `card.action.trigger` when it is clicked."""
    behaviour: Card = ({"type": "callback", "value": {"action": button.action}}
                       if button.action else {"type": "open_url", "default_url": button.url})
    return {
        "tag": "button",
        "text": {"tag": "plain_text", "content": button.label},
        "type": "primary" if button.primary else "default",
        "behaviors": [behaviour],
    }


def _card(frame: CardFrame, title: str, sections: Sequence[str], *, buttons: bool) -> Card:
    elements: list[Card] = []
    for section in sections:
        if elements:
            elements.append({"tag": "hr"})
        elements.append({"tag": "markdown", "content": section})
    if buttons and frame.buttons:
        elements.append({
            "tag": "column_set",
            "flex_mode": "flow",
            "columns": [
                {"tag": "column", "width": "auto", "elements": [_button(b)]}
                for b in frame.buttons
            ],
        })
    header: Card = {"title": {"tag": "plain_text", "content": title}}
    if frame.subtitle:
        header["subtitle"] = {"tag": "plain_text", "content": frame.subtitle}
    header["template"] = frame.template
    return {
        "schema": "2.0",
        "config": {"update_multi": True, "summary": {"content": title}},
        "header": header,
        "body": {"elements": elements},
    }


def build_cards(frame: CardFrame, sections: Iterable[str], *,
                limit: int = MAX_REQUEST_BYTES) -> list[Card]:
    """Cards holding `sections` in order, each within `limit` request bytes; when more
    than one is needed each title says which part it is, and the buttons go last."""
    parts = [s.strip() for s in sections if s.strip()]

    def titled(part: int, count: int) -> str:
        if count == 1:
            return frame.title
        return frame.part_title % {"title": frame.title, "part": part, "parts": count}

    def measure(chunk: str) -> int:
        # Worst case for every chunk: a two-digit part number and the buttons.
        return request_bytes(_card(frame, titled(99, 99), chunk.split(SECTION_BREAK),
                                   buttons=True))

    chunks = split_sections(parts, limit, measure, joiner=SECTION_BREAK) or [""]
    return [
        _card(frame, titled(index, len(chunks)),
              [s for s in chunk.split(SECTION_BREAK) if s],
              buttons=index == len(chunks))
        for index, chunk in enumerate(chunks, start=1)
    ]


_MARKUP = FeishuMarkup()


def _line(line: Line) -> str:
    return inline(line, _MARKUP)


def _heading(line: Line) -> str:
    # Bold already: a strong span inside is plain text, so no `**` closes it early.
    text = _line(tuple(Text(s.text) if isinstance(s, Strong) else s for s in line)).strip()
    return f"**{text}**" if text else ""


# Blocks as card markdown: `- ` items, a fact's label in bold, small print in grey.
_FORM = TextForm(_MARKUP, heading=_heading, bullet="- ", fact="**{label}**{colon}{value}",
                 context="<font color='grey'>{}</font>")


def _button_of(button: DocButton) -> Button | None:
    if button.action:
        return Button(label=button.label, action=button.action, primary=button.primary)
    if _is_web_url(button.url):
        return Button(label=button.label, url=button.url, primary=button.primary)
    return None


def encode(document: Document, *, limit: int = MAX_REQUEST_BYTES) -> list[Card]:
    """A document as one or more cards: its title, subtitle and tone in the header,
    one markdown element per part (a horizontal rule between), its buttons last (the
    first few key PRs', then its own)."""
    buttons = [_button_of(b) for b in
               (*document.item_buttons()[:KEY_PULL_BUTTONS], *document.buttons())]
    frame = CardFrame(title=document.title, subtitle=document.subtitle,
                      template=_COLOURS.get(document.tone, "blue"),
                      buttons=tuple(b for b in buttons if b is not None),
                      part_title=document.part_title)
    sections = ["\n".join(text for text in (block_text(b, _FORM, document.colon) for b in part)
                          if text)
                for part in parts(document)]
    return build_cards(frame, sections, limit=limit)


def digest_cards(digest: Digest, *, limit: int = MAX_REQUEST_BYTES) -> list[Card]:
    """The weekly digest as one or more cards."""
    return encode(digest_document(digest), limit=limit)


def _reply_cards(reply: Reply, *, limit: int = MAX_REQUEST_BYTES) -> list[Card]:
    """A chat reply as cards; a digest reply is the digest's cards."""
    return encode(reply_document(reply), limit=limit)


reply_cards = reply_memo(_reply_cards)
