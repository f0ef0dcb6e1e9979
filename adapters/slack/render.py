"""`Document` -> Slack Block Kit messages: the core lays a digest or reply out
(`bot.render.layouts`); this module only encodes it.

Escaping lives in `SlackMarkup` (`adapters.slack.markup`). Blocks are built with
`slack_sdk.models.blocks`, whose `to_dict()` enforces the per-field limits (section
text 3000, header 150, button text 75, ...), so an oversized block fails here rather
than at Slack. What the models do not check - 50 blocks per message and the
undocumented cumulative size behind `msg_blocks_too_long` - is kept by the shared
packing (`adapters.packing`). Long text is cut with the shared `split_sections`, at
line ends first, and never inside a `<url|label>` link or an `&amp;` entity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from adapters.packing import pack
from adapters.slack import TEMPLATES
from adapters.slack.markup import SlackMarkup
from bot.i18n import translator
from bot.models import Digest, Reply
from bot.render import split_sections
from bot.render.document import (
    Block as DocBlock,
)
from bot.render.document import (
    Button,
    Code,
    Context,
    Document,
    Facts,
    Heading,
    Items,
    Line,
    Paragraph,
    Strong,
    Text,
    inline,
    parts,
)
from bot.render.hints import with_usage_hint
from bot.render.layouts import digest_document, reply_document
from bot.render.markup import is_web_url
from bot.render.memo import reply_memo
from bot.render.text_form import TextForm, block_text

MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_FIELD_CHARS = 2000
MAX_HEADER_CHARS = 150
MAX_BUTTON_CHARS = 75
MAX_ACTIONS = 25
# Slack rejects messages whose block text adds up to roughly 12,000 characters with
# `msg_blocks_too_long`, below every documented limit (bolt-js issues #2509, #2867);
# keep well clear of it.
MAX_MESSAGE_CHARS = 8000
# The notification text that accompanies blocks; Slack advises at most 4,000.
MAX_FALLBACK_CHARS = 3000

ACTION_PREFIX = "prdigest."

_MRKDWN = SlackMarkup()
# An opening `<` or `&` without its closing `>` or `;` at the end of a piece of text.
_OPEN_ENTITY = re.compile(r"<[^>]*$|&[#a-zA-Z0-9]*$")

ResponseType = Literal["in_channel", "ephemeral"]


@dataclass(frozen=True)
class SlackMessage:
    """One Slack message: the notification text and its blocks (as sent, dicts)."""

    text: str
    blocks: tuple[dict[str, Any], ...]
    response_type: ResponseType = "in_channel"

    def as_post(self) -> dict[str, Any]:
        """The `chat.postMessage` / `response_url` fields of this message."""
        return {"text": self.text, "blocks": list(self.blocks)}


def slack_length(text: str) -> int:
    """Characters as Slack counts them (UTF-16 code units, so an emoji counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def slack_measure(text: str) -> int:
    """`slack_length`, or more than any limit for text ending inside a link or an
    entity: the shared splitter then never cuts there."""
    if _OPEN_ENTITY.search(text):
        return 10**9
    return slack_length(text)


def split_text(pieces: Iterable[str], limit: int = MAX_SECTION_CHARS, *,
               joiner: str = "\n") -> list[str]:
    """Whole pieces packed into texts of at most `limit`; a piece too long on its own is
    cut at line ends, then spaces, never inside markup."""
    return split_sections([p for p in pieces if p.strip()], limit, slack_measure,
                          joiner=joiner)


def _section(text: str, accessory: ButtonElement | None = None) -> SectionBlock:
    # verbatim: Slack must not turn `@channel`, `#name` or bare URLs from GitHub text
    # into mentions or links; the links the templates write are explicit `<url|label>`.
    return SectionBlock(text=MarkdownTextObject(text=text, verbatim=True), accessory=accessory)


def _context(texts: Sequence[str]) -> list[ContextBlock]:
    """Small print, packed like sections: one element of at most 3000 per block, so a
    block never carries more than a section does."""
    return [ContextBlock(elements=[MarkdownTextObject(text=t, verbatim=True)])
            for t in split_text(texts, MAX_SECTION_CHARS)]



def _fit_plain(text: str, limit: int) -> str:
    """Plain text (header, button label) shortened at a word with an ellipsis; plain
    text holds no markup, so shortening cannot break any."""
    text = text.strip()
    if slack_length(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "…"


def _block_chars(block: dict[str, Any]) -> int:
    """The text a block carries, the measure behind `msg_blocks_too_long`."""
    total = 0
    for key, value in block.items():
        if key in ("text", "url") and isinstance(value, str):
            total += slack_length(value)
        elif isinstance(value, dict):
            total += _block_chars(value)
        elif isinstance(value, list):
            total += sum(_block_chars(v) for v in value if isinstance(v, dict))
    return total


def _packed(units: Sequence[Sequence[Block]], *, max_blocks: int, max_chars: int
            ) -> list[list[dict[str, Any]]]:
    """Units of blocks (`adapters.packing`) in messages under Slack's limits, as sent."""
    return pack([[b.to_dict() for b in unit] for unit in units], max_blocks=max_blocks,
                max_chars=max_chars, size=_block_chars,
                trailing=lambda block: block.get("type") == "divider")


# --- documents ----------------------------------------------------------------------


def _line(line: Line) -> str:
    return inline(line, _MRKDWN)


def _heading(line: Line) -> str:
    """A heading in bold: its text's own asterisks shown as `∗`, so none closes it."""
    text = "".join(_MRKDWN.esc(span.text).replace("*", "∗")
                   if isinstance(span, Text | Strong) else inline((span,), _MRKDWN)
                   for span in line)
    return f"*{text}*"


# Headings, paragraphs and items as lines of mrkdwn (`bot.render.text_form`): a heading
# in bold, an unnumbered item after `• `.
_FORM = TextForm(_MRKDWN, heading=_heading, bullet="• ")


def _texts(block: DocBlock) -> list[str]:
    """A block's texts, one per item (Slack packs and splits them between items; a
    heading stays with what follows it); none for a block that is no heading,
    paragraph or list."""
    if isinstance(block, Items):
        return [block_text(Items((item,), block.ordered), _FORM) for item in block.items]
    return [block_text(block, _FORM)] if isinstance(block, Heading | Paragraph) else []


def _actions(buttons: Sequence[Button]) -> list[ActionsBlock]:
    """Buttons as one actions block: links open their page, the others carry their
    action (`bot.actions`) in `value`, which a click sends back."""
    elements: list[ButtonElement] = []
    for index, button in enumerate(buttons[:MAX_ACTIONS]):
        label = PlainTextObject(text=_fit_plain(button.label, MAX_BUTTON_CHARS))
        style = "primary" if button.primary else None
        if button.url:
            if is_web_url(button.url):
                elements.append(ButtonElement(text=label, url=button.url, style=style,
                                              action_id=f"{ACTION_PREFIX}open-{index}"))
        elif button.action:
            elements.append(ButtonElement(text=label, value=button.action, style=style,
                                          action_id=f"{ACTION_PREFIX}act-{index}"))
    return [ActionsBlock(elements=elements)] if elements else []


def _part_blocks(part: Sequence[DocBlock]) -> list[Block]:
    """A part's blocks: texts packed into as few sections as fit, an item with a button
    of its own a section with the button beside it, facts side by side, small print
    as context."""
    blocks: list[Block] = []
    texts: list[str] = []

    def flush() -> None:
        blocks.extend(_section(t) for t in split_text(texts))
        texts.clear()

    for block in part:
        if isinstance(block, Facts):
            flush()
            blocks.append(SectionBlock(fields=[
                MarkdownTextObject(text=f"*{_MRKDWN.esc(label)}*\n{_line(value)}",
                                   verbatim=True)
                for label, value in block.facts[:10]]))
        elif isinstance(block, Context):
            flush()
            blocks.extend(_context([_line(line) for line in block.lines]))
        elif isinstance(block, Items) and any(item.button for item in block.items):
            for item in block.items:
                text = split_text(_texts(Items((item,), block.ordered)))
                if texts and not blocks and len(texts) == 1:
                    text[0] = f"{texts.pop()}\n{text[0]}"  # the heading with its first
                flush()
                accessory = _accessory(item.button)
                blocks.extend([_section(text[0], accessory=accessory),
                               *(_section(t) for t in text[1:])])
        else:
            texts.extend(_texts(block))
    flush()
    return blocks


def _accessory(button: Button | None) -> ButtonElement | None:
    if button is None or not is_web_url(button.url):
        return None
    return ButtonElement(text=PlainTextObject(text=_fit_plain(button.label, MAX_BUTTON_CHARS)),
                         url=button.url,
                         action_id=f"{ACTION_PREFIX}open-{urlsplit(button.url).path.strip('/')}"[:255])


def _title_block(title: str, notification: str) -> Block:
    """The title as a header block, or as bold text when too long for one."""
    if slack_length(title) <= MAX_HEADER_CHARS:
        return HeaderBlock(text=PlainTextObject(text=title))
    return _section(_MRKDWN.bold(notification))


def encode(document: Document, *, max_blocks: int = MAX_BLOCKS,
           max_chars: int = MAX_MESSAGE_CHARS) -> list[SlackMessage]:
    """A document as one or more Block Kit messages, in reading order: its parts under
    dividers, its facts side by side, small print as context, its buttons last. What
    does not fit one message continues in the next, which opens with a "part n of m"
    line."""
    layout: list[Sequence[Block]] = []
    head: list[Block] = [_title_block(document.title, document.notification)] \
        if document.headline else []
    for index, part in enumerate(parts(document)):
        blocks = _part_blocks(part)
        opening = ([] if index == 0 else [DividerBlock()]) + (head if index == 0 else [])
        # A part's opening (divider, heading, first text) stays together in one message.
        first = next((i for i, b in enumerate(blocks) if isinstance(b, SectionBlock)
                      and b.fields is None), len(blocks) - 1)
        layout.append([*opening, *blocks[:first + 1]])
        for block in blocks[first + 1:]:
            layout.append([block])
    layout.append(_actions(document.buttons()))
    notification = _fit_mrkdwn(_MRKDWN.esc(document.notification))
    packed = _packed(layout, max_blocks=max_blocks - 1, max_chars=max_chars - MAX_HEADER_CHARS * 2)
    response_type: ResponseType = "ephemeral" if document.private else "in_channel"
    messages: list[SlackMessage] = []
    for number, message in enumerate(packed, 1):
        text = notification
        if len(packed) > 1 and number > 1:
            text = _fit_mrkdwn(_MRKDWN.esc(
                document.part_label(document.notification, number, len(packed))))
            message = [b.to_dict() for b in _context([text])] + message
        messages.append(SlackMessage(text=text, blocks=tuple(message),
                                     response_type=response_type))
    return messages


def _fit_mrkdwn(text: str) -> str:
    """Notification text under its limit, cut only between whole pieces of markup."""
    return split_text([text], MAX_FALLBACK_CHARS)[0] if text else text


def render_digest_messages(digest: Digest, *, max_blocks: int = MAX_BLOCKS,
                           max_chars: int = MAX_MESSAGE_CHARS) -> list[SlackMessage]:
    """The weekly digest as Block Kit messages."""
    return encode(digest_document(digest), max_blocks=max_blocks, max_chars=max_chars)


def _slash_hint(reply: Reply) -> Line:
    """How Slack takes a command: after `/prdigest`, in a mention, in a direct message."""
    t = translator(reply.lang, (TEMPLATES,))
    before, _, after = t(
        "In Slack, type a command after %(slash)s, mention me with it, or send it to "
        "me in a direct message.", slash="\x00").partition("\x00")
    return (Text(before), Code("/prdigest"), Text(after))


def _render_reply_messages(reply: Reply) -> list[SlackMessage]:
    """A chat reply as Block Kit messages; help and errors for the asker only
    (`ephemeral` where Slack allows it), and in help how Slack takes a command
    (`bot.render.hints`)."""
    if reply.kind == "digest" and reply.digest is not None:
        return render_digest_messages(reply.digest)
    return encode(with_usage_hint(reply, reply_document(reply),
                                  lambda: _slash_hint(reply)))


render_reply_messages = reply_memo(_render_reply_messages)
