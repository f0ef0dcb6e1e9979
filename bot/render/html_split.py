"""HTML chat text cut into messages, for a chat format written in HTML's inline tags
(no tag spans a line): sections (split at blank lines) packed whole first with the
shared `split_sections`, then at line ends; a line too long for one message is cut
between words - never inside a tag or an entity - each tag open at a cut closed before
it and opened again after it, so every message is well formed on its own; and a
message never ends on a section heading that fits with its text in the next one.

The format says how it counts a message's length (`measure`: what a reader sees,
counted as its platform counts) and what a heading line looks like.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.render import split_sections

__all__ = ["split_html"]

_TAG_PARTS = re.compile(r"(<[^>]*>)")
_OPENING_TAG = re.compile(r"<([a-z][a-z0-9-]*)(?:\s[^>]*)?>")
_CLOSING_TAG = re.compile(r"</([a-z][a-z0-9-]*)\s*>")
# Pieces of text that are never cut: an entity, a run of spaces, a word, one character.
_TEXT_ATOM = re.compile(r"&#?[0-9A-Za-z]+;|[ \t]+|[^\s&]+|.", re.S)


def split_html(text: str, limit: int, measure: Callable[[str], int], *,
               heading: re.Pattern[str]) -> list[str]:
    """`text` cut into messages of at most `limit` by `measure`, at section boundaries
    (blank lines) first, then at line ends; never inside a tag or entity. A line that
    is all `heading` moves to the next message, where its text is, when it fits."""
    sections = [s.strip("\n") for s in re.split(r"\n\s*\n", text.strip()) if s.strip()]
    fitted = ["\n".join(_fit_line(line, limit, measure) for line in s.split("\n"))
              for s in sections]
    return _headings_with_their_text(split_sections(fitted, limit, measure), limit, measure,
                                     heading)


def _headings_with_their_text(messages: list[str], limit: int, measure: Callable[[str], int],
                              heading: re.Pattern[str]) -> list[str]:
    """A message never ends on a section heading: it moves to the next message, where
    its text is, when it fits there."""
    result = list(messages)
    for index in range(len(result) - 1):
        head, _, last = result[index].rpartition("\n")
        if not head or not heading.fullmatch(last.strip()):
            continue
        moved = f"{last}\n{result[index + 1]}"
        if measure(moved) <= limit:
            result[index] = head.rstrip("\n")
            result[index + 1] = moved
    return result


def _fit_line(line: str, limit: int, measure: Callable[[str], int]) -> str:
    """A line too long for one message, as several lines; tags open at a cut are closed
    before it and opened again after it, so every line is well formed on its own."""
    if measure(line) <= limit:
        return line
    chunks: list[str] = []
    current = ""
    used = 0
    open_tags: list[tuple[str, str]] = []  # (name, opening tag as written)

    def cut() -> None:
        nonlocal current, used
        closing = "".join(f"</{name}>" for name, _ in reversed(open_tags))
        chunks.append(current + closing)
        current = "".join(tag for _, tag in open_tags)
        used = 0

    for part in _TAG_PARTS.split(line):
        if not part:
            continue
        if part.startswith("<"):
            if closing_match := _CLOSING_TAG.fullmatch(part):
                if open_tags and open_tags[-1][0] == closing_match[1]:
                    open_tags.pop()
            elif opening_match := _OPENING_TAG.fullmatch(part):
                open_tags.append((opening_match[1], part))
            current += part
            continue
        for atom in _TEXT_ATOM.findall(part):
            for piece in [atom] if measure(atom) <= limit else list(atom):
                size = measure(piece)
                if used + size > limit and used:
                    cut()
                current += piece
                used += size
    if current:
        chunks.append(current)
    return "\n".join(chunks)
