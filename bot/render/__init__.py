"""Digest and Reply to words: jinja2 templates per format, message catalogs per language.

Structure comes from `DigestView`, wording from `templates/`, escaping from
`bot.render.markup`. One jinja2 environment per language, built once. A chat platform's
renderer lives with its adapter and builds on these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

import msgspec

from bot.models import Digest, Reply
from bot.render.chat import chat_fit
from bot.render.markup import Markup, markup_for
from bot.render.templating import environment, render_template
from bot.render.view import DigestView

__all__ = ["environment", "render_digest", "render_reply", "render_template", "split_sections"]

DigestFormat = Literal["markdown", "text", "json"]
_TEMPLATE_OF = {"markdown": "markdown/digest.md.j2", "text": "text/digest.txt.j2"}
_REPLY_EXT = {"markdown": "md.j2", "text": "txt.j2"}


def render_digest(digest: Digest, fmt: DigestFormat) -> str:
    """The digest as Markdown (the seed report), plain chat text, or Digest JSON."""
    if fmt == "json":
        return msgspec.json.format(msgspec.json.encode(digest), indent=2).decode() + "\n"
    if fmt == "text":
        return chat_fit(digest)[1]
    view = DigestView(digest)
    return render_template(_TEMPLATE_OF[fmt], digest.lang, v=view, d=digest, m=markup_for(fmt))


def render_reply(reply: Reply, fmt: str, *, markup: Markup | None = None,
                 roots: tuple[Path, ...] = ()) -> str:
    """A chat reply in a text format (`markdown` or `text`); a digest reply is the digest.
    A chat platform with reply templates of its own (`<fmt>/reply_<kind>.<fmt>.j2` in
    one of `roots`) renders them with its `markup`."""
    if reply.kind == "digest" and reply.digest is not None and fmt in _TEMPLATE_OF:
        return render_digest(reply.digest, fmt)  # type: ignore[arg-type]
    ext = _REPLY_EXT.get(fmt, f"{fmt}.j2")
    return render_template(f"{fmt}/reply_{reply.kind}.{ext}", reply.lang, roots=roots,
                           reply=reply, m=markup or markup_for(fmt), params=dict(reply.params))


def split_sections(
    sections: Iterable[str],
    limit: int,
    measure: Callable[[str], int] = len,
    *,
    joiner: str = "\n\n",
) -> list[str]:
    """Pack whole sections into messages of at most `limit`; a section that is too long
    on its own is split at line ends (then at spaces), never inside a line's markup."""
    pieces = (piece for section in sections for piece in _fit(section, limit, measure))
    return _pack(pieces, limit, measure, joiner)


def _fit(section: str, limit: int, measure: Callable[[str], int]) -> list[str]:
    if measure(section) <= limit:
        return [section]
    parts = (part for line in section.split("\n")
             for part in ([line] if measure(line) <= limit
                          else _split_words(line, limit, measure)))
    return _pack(parts, limit, measure, "\n")


def _pack(pieces: Iterable[str], limit: int, measure: Callable[[str], int],
          joiner: str) -> list[str]:
    """Consecutive pieces joined by `joiner` for as long as the result fits `limit`."""
    packed: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}{joiner}{piece}" if current else piece
        if measure(candidate) <= limit:
            current = candidate
        else:
            if current:
                packed.append(current)
            current = piece
    if current:
        packed.append(current)
    return packed


def _split_words(line: str, limit: int, measure: Callable[[str], int]) -> list[str]:
    parts: list[str] = []
    current = ""
    for word in line.split(" "):
        candidate = f"{current} {word}" if current else word
        if measure(candidate) <= limit:
            current = candidate
            continue
        if current:
            parts.append(current)
        while measure(word) > limit:  # one unbroken run longer than a message
            cut = limit
            while cut > 1 and measure(word[:cut]) > limit:
                cut -= 1
            parts.append(word[:cut])
            word = word[cut:]
        current = word
    if current:
        parts.append(current)
    return parts
