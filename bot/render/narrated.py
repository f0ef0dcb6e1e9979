"""The narrator's sentences in a view: which of a section a chat view shows, and each in
a format's markup (code spans as code, PR references as the engine writes them). The
sentences themselves are `Digest.narration`, verified by `bot.narrate`.

The chat view chooses by what each sentence does (`NarratedProse.keys`), never by its
place: the summary keeps its count, its risk count and its highlights (the PRs it
names) before what says where the work went; "changes" the first sentence of each theme
it shows. A sentence is shown whole or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.models import NarratedProse, Narration
from bot.render.markup import Markup, code_spans, narrated_text

CHAT_SUMMARY = 5
"""Narrated summary sentences a chat view shows at most."""
CHAT_TRENDS = 2
_REF = re.compile(r"#(\d+)")
PARAGRAPHS = ("summary", "changes", "trends")
"""The sections whose narrated sentences stand in for the section's own text (the
others, risks, key PRs and suggestions, carry theirs in their own items)."""
_SUMMARY_ORDER = ("count", "risk", "highlight", "added", "focus")


def _told(narration: Narration | None, section_id: str) -> NarratedProse | None:
    if narration is None:
        return None
    return next((p for p in narration.prose if p.section == section_id), None)


def shown(narration: Narration | None, section_id: str, chat: bool,
          themes: int | None, named: frozenset[int] = frozenset()) -> tuple[str, ...] | None:
    """A section's narrated sentences as a view shows them (None: the engine's text).
    `named`: the PRs the engine's own summary names in this view, which a chat view's
    narrated summary names too."""
    told = _told(narration, section_id) if section_id in PARAGRAPHS else None
    if told is None or not chat:
        return told.sentences if told is not None else None
    if section_id == "summary":
        return _chat_summary(told, named)
    if section_id == "changes" and themes is not None:
        return _first_of_each(told, themes)
    if section_id == "trends":
        return told.sentences[:CHAT_TRENDS]
    return told.sentences


def _chat_summary(told: NarratedProse, named: frozenset[int]) -> tuple[str, ...]:
    """At most `CHAT_SUMMARY` sentences, chosen by role in `_SUMMARY_ORDER` (every
    highlight before any sentence of focus), shown in their own order; the engine's
    sentence naming what the model's did not ("added") only where this view's engine
    summary would name one of those PRs."""
    if len(told.keys) != len(told.sentences):
        sentences = told.sentences
        return sentences if len(sentences) <= CHAT_SUMMARY else \
            (*sentences[:CHAT_SUMMARY - 1], sentences[-1])
    model = set().union(*(_refs(s) for s, k in zip(told.sentences, told.keys, strict=True)
                          if k != "added"))
    wanted = [i for i, k in enumerate(told.keys) if k != "added" or (named - model)]
    ranked = sorted(wanted, key=lambda i: (_SUMMARY_ORDER.index(told.keys[i])
                                           if told.keys[i] in _SUMMARY_ORDER
                                           else len(_SUMMARY_ORDER), i))
    chosen = sorted(ranked[:CHAT_SUMMARY])
    return tuple(told.sentences[i] for i in chosen)


def _refs(text: str) -> set[int]:
    return {int(n) for n in _REF.findall(text)}


def _first_of_each(told: NarratedProse, themes: int) -> tuple[str, ...]:
    """The first sentence of each of the first `themes` themes."""
    if len(told.keys) != len(told.sentences):
        return told.sentences[:themes]
    seen: list[str] = []
    out = []
    for key, sentence in zip(told.keys, told.sentences, strict=True):
        if key in seen:
            continue
        seen.append(key)
        if len(seen) > themes:
            break
        out.append(sentence)
    return tuple(out)


def key_summary(narration: Narration | None, number: int) -> str | None:
    """A key PR's narrated sentence; None when it was not narrated."""
    told = _told(narration, "key_prs")
    if told is None or str(number) not in told.keys:
        return None
    return told.sentences[told.keys.index(str(number))]


def in_markup(m: Markup, text: str, narration: Narration | None, section_id: str | None,
              pr: Callable[[int, str], str], *, code: bool = True) -> str:
    """`text` of a section in the format's markup: a narrated section's through
    `narrated_text`; the engine's with its code spans as code (`code`), or escaped.
    `section_id` None: the text is narrated."""
    if section_id is not None and (narration is None
                                   or section_id not in narration.sections_narrated):
        return code_spans(m, text) if code else m.esc(text)
    return narrated_text(m, text, pr)
