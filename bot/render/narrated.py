"""The narrator's sentences in a view: how many of a section a chat view shows, and
each in a format's markup (code spans as code, PR references as the engine writes
them). The sentences themselves are `Digest.narration`, verified by `bot.narrate`."""

from __future__ import annotations

from collections.abc import Callable

from bot.models import Narration
from bot.render.markup import Markup, code_spans, narrated_text

CHAT_SUMMARY = 3
"""Narrated summary sentences a chat view shows: the first ones and the last (the
risk count)."""
CHAT_TRENDS = 2


def shown(narration: Narration | None, section_id: str, chat: bool,
          themes: int | None) -> tuple[str, ...] | None:
    """A section's narrated sentences as a view shows them (None: the engine's text)."""
    if narration is None:
        return None
    told = next((p.sentences for p in narration.prose if p.section == section_id), None)
    if told is None or not chat:
        return told
    if section_id == "summary" and len(told) > CHAT_SUMMARY:
        return (*told[:CHAT_SUMMARY - 1], told[-1])
    room = {"changes": themes, "trends": CHAT_TRENDS}.get(section_id)
    return told[:room] if room is not None else told


def in_markup(m: Markup, text: str, narration: Narration | None, section_id: str | None,
              pr: Callable[[int, str], str], *, code: bool = True) -> str:
    """`text` of a section in the format's markup: a narrated section's through
    `narrated_text`; the engine's with its code spans as code (`code`), or escaped.
    `section_id` None: the text is narrated."""
    if section_id is not None and (narration is None
                                   or section_id not in narration.sections_narrated):
        return code_spans(m, text) if code else m.esc(text)
    return narrated_text(m, text, pr)
