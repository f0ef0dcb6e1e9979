"""A document's blocks written as text in a chat format's markup, for the formats that
write a message as lines: a heading line, paragraphs, bulleted items with their
sub-items beneath, facts as `label: value`, context lines in small print; and a whole
document as one such text, its parts a blank line apart. The order and the shape are
the same for each; what a format writes its own way - its markup,
its heading, its bullet, how it sets a fact or small print apart - is its `TextForm`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.render.document import (
    Block,
    Context,
    Document,
    Facts,
    Heading,
    Item,
    Items,
    Line,
    Paragraph,
    Text,
    inline,
    parts,
)
from bot.render.markup import Markup

__all__ = ["TextForm", "block_text", "document_text"]


@dataclass(frozen=True)
class TextForm:
    """How a format writes blocks: `heading` a heading's line; `bullet` before an
    unnumbered item; `fact` a fact, from its escaped `label`, `colon` and `value`;
    `context` around each line of small print (`{}`); `item` an item's own line (None:
    its spans in `markup`)."""

    markup: Markup
    heading: Callable[[Line], str]
    bullet: str
    fact: str = "{label}{colon}{value}"
    context: str = "{}"
    item: Callable[[Item], str] | None = None

    def line(self, line: Line) -> str:
        return inline(line, self.markup)

    def item_line(self, item: Item) -> str:
        return self.item(item) if self.item is not None else self.line(item.line)


def block_text(block: Block, form: TextForm, colon: str = ": ") -> str:
    """`block` as text in `form` ("" for a block text does not show: a divider, the
    buttons); `colon` parts a fact's label from its value, in the document's words."""
    if isinstance(block, Heading):
        return form.heading(block.line)
    if isinstance(block, Paragraph):
        return "\n".join(form.line(line) for line in block.lines)
    if isinstance(block, Items):
        bullet = "" if block.ordered else form.bullet
        return "\n".join(text for item in block.items for text in (
            bullet + form.item_line(item), *(f"  - {form.line(sub)}" for sub in item.sub)))
    if isinstance(block, Facts):
        esc = form.markup.esc
        return "\n".join(form.fact.format(label=esc(label), colon=esc(colon),
                                          value=form.line(value))
                         for label, value in block.facts)
    if isinstance(block, Context):
        return "\n".join(form.context.format(form.line(line)) for line in block.lines)
    return ""


def document_text(document: Document, form: TextForm) -> str:
    """The document as one text in `form`, before splitting: a blank line between its
    parts (where a long message is split first); within a part of several, and after
    a heading, one line break; its title (a headline) over the first part."""
    pieces = parts(document)
    texts: list[str] = [form.heading((Text(document.title),))] if document.headline else []
    for part in pieces:
        text = ""
        previous: Block | None = None
        for block in part:
            rendered = block_text(block, form, document.colon)
            if not rendered:
                continue
            joiner = "\n" if isinstance(previous, Heading) or len(pieces) > 1 else "\n\n"
            text = f"{text}{joiner}{rendered}" if text else rendered
            previous = block
        texts.append(text)
    if document.headline and len(texts) > 1:  # the title over the first part
        texts[:2] = [f"{texts[0]}\n{texts[1]}"]
    return "\n\n".join(t for t in texts if t)
