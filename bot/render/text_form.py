"""A document's blocks written as text in a chat format's markup, for the formats that
write a message as lines: a heading line, paragraphs, bulleted items with their
sub-items beneath, facts as `label: value`, context lines in small print. The order
and the shape are the same for each; what a format writes its own way - its markup,
its heading, its bullet, how it sets a fact or small print apart - is its `TextForm`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.render.document import (
    Block,
    Context,
    Facts,
    Heading,
    Item,
    Items,
    Line,
    Paragraph,
    inline,
)
from bot.render.markup import Markup

__all__ = ["TextForm", "block_text"]


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
