"""The message document: what the core says, laid out once, before any platform's markup.

The core lays a Digest or a Reply out as a `Document` - blocks (heading, paragraph,
items, facts, context, buttons, divider) of spans (text, strong, code, link, PR
reference, a chat) - and each platform only encodes it (Block Kit, Telegram HTML, a Feishu
card), escaping every span's text its own way. So the wording, the order, the chat
form's budget and the buttons are decided here, in one place, for every platform.

The words still come from the shared templates: they are rendered with
`DocumentMarkup`, whose spans are marked with private-use characters (stripped from
every text first, so GitHub text can never forge one), and `parse_blocks` reads the
rendered text back into blocks: a blank line ends a block, a `HEADING` mark opens a
heading line, `• ` an item (`  - ` a sub-item), `1. ` a numbered one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar, Literal

from bot.models import Lang
from bot.render.markup import Markup, clean

# --- spans --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Strong:
    text: str


@dataclass(frozen=True, slots=True)
class Code:
    text: str


@dataclass(frozen=True, slots=True)
class Link:
    """A link to an http(s) address (the encoders drop any other: it shows as text)."""

    url: str
    label: str


@dataclass(frozen=True, slots=True)
class PullRef:
    """`#12` (`org/a#12` with `repo`), linked to the PR where `url` is set."""

    number: int
    url: str = ""
    repo: str = ""

    @property
    def label(self) -> str:
        return f"{self.repo}#{self.number}"


@dataclass(frozen=True, slots=True)
class ChatRef:
    """A chat by its platform's id, shown as the platform names a chat (a link to it
    where it can; a markup without `chat` shows the id)."""

    text: str


Span = Text | Strong | Code | Link | PullRef | ChatRef
Line = tuple[Span, ...]

# --- blocks -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Button:
    """A button: it opens `url`, or runs the chat command `action` names (the data of
    `bot.actions.encode_action`). `primary` marks the one a reader most likely wants."""

    label: str
    url: str = ""
    action: str = ""
    primary: bool = False


@dataclass(frozen=True, slots=True)
class Heading:
    line: Line


@dataclass(frozen=True, slots=True)
class Paragraph:
    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Item:
    """A list item, its sub-items, and a button of its own (a key PR's link), which a
    platform shows beside the item or with the message's other buttons."""

    line: Line
    sub: tuple[Line, ...] = ()
    button: Button | None = None


@dataclass(frozen=True, slots=True)
class Items:
    items: tuple[Item, ...]
    # Numbered (suggestions): the line holds its own number.
    ordered: bool = False


@dataclass(frozen=True, slots=True)
class Facts:
    """Label and value pairs a platform may show side by side (the digest's header)."""

    facts: tuple[tuple[str, Line], ...]


@dataclass(frozen=True, slots=True)
class Context:
    """Small print: how the digest was made, what its data leaves unknown."""

    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Divider:
    """Where one part of a message ends and the next begins (a digest's sections): a
    platform splits a long message here first."""


@dataclass(frozen=True, slots=True)
class Buttons:
    buttons: tuple[Button, ...]


Block = Heading | Paragraph | Items | Facts | Context | Divider | Buttons

# The tone of a message, which a platform may show as a colour: its worst risk, or
# what kind of answer it is.
Tone = Literal["high", "medium", "low", "clear", "info", "done", "quiet"]


@dataclass(frozen=True, slots=True)
class Document:
    """One message as the core lays it out. `title` heads it (a card's header; opening
    the text where `headline` says so, as a digest's does); `notification` is the one
    plain line a platform shows where it cannot show the message (a push, a list);
    `private` a reply meant for the asker alone."""

    kind: str
    lang: Lang
    title: str
    blocks: tuple[Block, ...]
    notification: str = ""
    subtitle: str = ""
    tone: Tone = "info"
    headline: bool = False
    private: bool = False
    # The title of a continuation, "%(title)s (%(part)s/%(parts)s)" in the reader's words,
    # and what parts a label from its value ("：" in zh).
    colon: str = ": "
    part_title: str = "%(title)s (%(part)s/%(parts)s)"

    def part_label(self, title: str, part: int, count: int) -> str:
        """The title of part `part` of `count` of a message split in several."""
        return self.part_title % {"title": title, "part": part, "parts": count}

    def buttons(self) -> tuple[Button, ...]:
        """The message's own buttons (not its items')."""
        return tuple(b for block in self.blocks if isinstance(block, Buttons)
                     for b in block.buttons)

    def item_buttons(self) -> tuple[Button, ...]:
        """The buttons of its items, in reading order."""
        return tuple(item.button for block in self.blocks if isinstance(block, Items)
                     for item in block.items if item.button is not None)

    def body(self) -> tuple[Block, ...]:
        """The blocks other than buttons (which a platform may draw apart)."""
        return tuple(block for block in self.blocks if not isinstance(block, Buttons))


def plain(line: Iterable[Span]) -> str:
    """A line's text as a reader sees it, without markup."""
    return "".join(span.label if isinstance(span, Link | PullRef) else span.text
                   for span in line)


# --- from templates -----------------------------------------------------------------

_STRONG, _STRONG_END = "\ue001", "\ue002"
_CODE, _CODE_END = "\ue003", "\ue004"
_LINK, _SEP, _END = "\ue005", "\ue006", "\ue007"
_PR = "\ue008"
HEADING = "\ue010"
_PRIVATE = re.compile("[\ue000-\ue0ff]")
_SPAN = re.compile(
    f"{_STRONG}([^\ue000-\ue0ff]*){_STRONG_END}|{_CODE}([^\ue000-\ue0ff]*){_CODE_END}|"
    f"{_LINK}([^\ue000-\ue0ff]*){_SEP}([^\ue000-\ue0ff]*){_END}|"
    f"{_PR}([^\ue000-\ue0ff]*)#(\\d+){_SEP}([^\ue000-\ue0ff]*){_END}")
_ITEM = re.compile(r"^[•\-*] ")
_SUB_ITEM = re.compile(r"^\s+[-•] ")
_NUMBERED = re.compile(r"^\d+\. ")


class DocumentMarkup:
    """The markup the templates write a document in: spans marked with private-use
    characters, which `esc` strips from all text first, so no text forges a span."""

    name: ClassVar[str] = "document"

    def esc(self, text: object) -> str:
        return _PRIVATE.sub("", clean(text))

    def bold(self, text: object) -> str:
        return f"{_STRONG}{' '.join(self.esc(text).split())}{_STRONG_END}"

    def code(self, text: object) -> str:
        return f"{_CODE}{' '.join(self.esc(text).split())}{_CODE_END}"

    def link(self, url: str, label: object) -> str:
        return f"{_LINK}{self.esc(url).strip()}{_SEP}{' '.join(self.esc(label).split())}{_END}"

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        return f"{_PR}{self.esc(repo)}#{int(number)}{_SEP}{self.esc(url).strip()}{_END}"


MARKUP = DocumentMarkup()


def parse_line(text: str) -> Line:
    """One rendered line of `DocumentMarkup` as spans."""
    spans: list[Span] = []
    last = 0

    def text_up_to(end: int) -> None:
        if end > last:
            spans.append(Text(_PRIVATE.sub("", text[last:end])))

    for match in _SPAN.finditer(text):
        text_up_to(match.start())
        if match[1] is not None:
            spans.append(Strong(match[1]))
        elif match[2] is not None:
            spans.append(Code(match[2]))
        elif match[3] is not None:
            spans.append(Link(match[3], match[4]))
        else:
            spans.append(PullRef(int(match[6]), match[7], match[5]))
        last = match.end()
    text_up_to(len(text))
    return _merged(spans)


def _merged(spans: list[Span]) -> Line:
    """Adjacent texts as one; no empty text."""
    out: list[Span] = []
    for span in spans:
        if isinstance(span, Text) and not span.text:
            continue
        if isinstance(span, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + span.text)
        else:
            out.append(span)
    return tuple(out)


def parse_blocks(text: str) -> tuple[Block, ...]:
    """Rendered `DocumentMarkup` text as blocks: a blank line ends a block; a line
    opening with `HEADING` is a heading, `• ` an item (`  - ` under it a sub-item),
    `1. ` a numbered item; other lines are a paragraph's."""
    blocks: list[Block] = []
    for chunk in re.split(r"\n[ \t]*\n", text.strip("\n")):
        blocks.extend(_chunk_blocks(chunk))
    return tuple(blocks)


def _chunk_blocks(chunk: str) -> Iterator[Block]:
    lines: list[Line] = []
    items: list[Item] = []
    ordered = False

    def flush() -> Iterator[Block]:
        nonlocal lines, items
        if lines:
            yield Paragraph(tuple(lines))
        if items:
            yield Items(tuple(items), ordered)
        lines, items = [], []

    for raw in chunk.split("\n"):
        if not raw.strip():
            continue
        if raw.lstrip().startswith(HEADING):
            yield from flush()
            yield Heading(parse_line(raw.lstrip()[1:].strip()))
        elif _SUB_ITEM.match(raw) and items:
            last = items[-1]
            items[-1] = Item(last.line, (*last.sub, parse_line(_SUB_ITEM.sub("", raw))))
        elif _ITEM.match(raw) or _NUMBERED.match(raw):
            numbered = bool(_NUMBERED.match(raw))
            if lines or (items and numbered != ordered):
                yield from flush()
            ordered = numbered
            items.append(Item(parse_line(raw if numbered else _ITEM.sub("", raw, count=1))))
        else:
            if items:
                yield from flush()
            lines.append(parse_line(raw.strip()))
    yield from flush()


# --- a readable form, for goldens and reviews ---------------------------------------


def outline(document: Document) -> str:
    """The document as an indented outline: what every platform encodes, in words."""
    head = [f"# {document.kind} [{document.lang}] tone={document.tone}"
            + (" private" if document.private else ""),
            f"title: {document.title}"]
    if document.subtitle:
        head.append(f"subtitle: {document.subtitle}")
    if document.notification:
        head.append(f"notification: {document.notification}")
    return "\n".join(head + [line for block in document.blocks
                             for line in _outline_block(block)]) + "\n"


def _outline_line(line: Line) -> str:
    out = []
    for span in line:
        if isinstance(span, Strong):
            out.append(f"**{span.text}**")
        elif isinstance(span, Code):
            out.append(f"`{span.text}`")
        elif isinstance(span, Link):
            out.append(f"[{span.label}]({span.url})")
        elif isinstance(span, PullRef):
            out.append(f"[{span.label}]({span.url})" if span.url else span.label)
        else:
            out.append(span.text)
    return "".join(out)


def _outline_block(block: Block) -> list[str]:
    if isinstance(block, Heading):
        return [f"## {_outline_line(block.line)}"]
    if isinstance(block, Paragraph):
        return ["", *(_outline_line(line) for line in block.lines)]
    if isinstance(block, Items):
        lines = []
        for item in block.items:
            lines.append(("  " if block.ordered else "  • ") + _outline_line(item.line)
                         + (f"  [{item.button.label}] -> {item.button.url}"
                            if item.button else ""))
            lines.extend(f"      - {_outline_line(sub)}" for sub in item.sub)
        return lines
    if isinstance(block, Facts):
        return [f"  {label}: {_outline_line(value)}" for label, value in block.facts]
    if isinstance(block, Context):
        return [f"  (small) {_outline_line(line)}" for line in block.lines]
    if isinstance(block, Divider):
        return ["----"]
    return [f"  [{b.label}]" + (f" -> {b.url}" if b.url else f" => {b.action}")
            + (" (primary)" if b.primary else "") for b in block.buttons]


# --- for encoders -------------------------------------------------------------------


def inline(line: Iterable[Span], markup: Markup) -> str:
    """A line's spans in a platform's markup: every text escaped by it, so nothing from
    GitHub becomes markup or a mention."""
    out: list[str] = []
    for span in line:
        if isinstance(span, Strong):
            out.append(markup.bold(span.text))
        elif isinstance(span, Code):
            out.append(markup.code(span.text))
        elif isinstance(span, Link):
            out.append(markup.link(span.url, span.label))
        elif isinstance(span, PullRef):
            out.append(markup.pr(span.number, span.url, span.repo))
        elif isinstance(span, ChatRef) and callable(chat := getattr(markup, "chat", None)):
            out.append(str(chat(span.text)))
        else:
            out.append(markup.esc(span.text))
    return "".join(out)


def parts(document: Document) -> list[list[Block]]:
    """The document's body (its buttons left out) cut at its dividers: the pieces a
    platform keeps apart (a section each) and splits a long message between first."""
    pieces: list[list[Block]] = [[]]
    for block in document.body():
        if isinstance(block, Divider):
            pieces.append([])
        else:
            pieces[-1].append(block)
    return [piece for piece in pieces if piece]
