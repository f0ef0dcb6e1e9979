"""From the model's answers to a narrated digest: each answer is verified, sentence by
sentence, and a section takes the narrated words only when it keeps at least half of
them; otherwise, or when its call failed, it stays exactly as the engine wrote it.

Pure functions over records: no calls, no clock, no store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import msgspec

from bot.models import Digest, Fallback, Lang, NarratedProse, PullAnswer, Risk
from bot.narrate.facts import PullFacts
from bot.narrate.schema import PullNarration, Sentence, WeekNarration
from bot.narrate.verify import Grounds, check

PROSE_SECTIONS = ("summary", "changes", "trends")
"""Sections narrated as sentences shown in place of the engine's paragraph or list."""
ORDER = ("summary", "changes", "trends", "risks", "key_prs", "suggestions")


@dataclass(frozen=True)
class PullWords:
    """One PR's verified narration: what survived the verifier (None: dropped)."""

    number: int
    title: str | None
    summary: str | None
    area: str
    risks: Mapping[int, str]
    dropped: int


def verify_pull(answer: PullNarration, facts: PullFacts, grounds: Grounds,
                lang: Lang) -> PullWords:
    """Every sentence of a map answer checked; the title and area too (they are shown)."""
    dropped = 0

    def keep(text: str) -> str | None:
        nonlocal dropped
        text = text.strip()
        if check(text, [facts.number], grounds, lang) is None:
            return text
        dropped += 1
        return None

    title = keep(answer.title) if len(answer.title) <= 60 else None
    summary = keep(answer.summary)
    area = answer.area.strip()
    if check(area, [facts.number], grounds, lang) is not None or len(area) > 40:
        area = ""
    known = {r.index for r in facts.risks}
    risks = {note.index: text for note in answer.risks if note.index in known
             and (text := keep(note.text)) is not None}
    return PullWords(number=facts.number, title=title, summary=summary, area=area,
                     risks=risks, dropped=dropped + (title is None and summary is None))


@dataclass
class Outcome:
    """What narration did to the digest, section by section."""

    model: str
    narrated: set[str] = field(default_factory=set)
    dropped: dict[str, int] = field(default_factory=dict)
    fallbacks: dict[str, str] = field(default_factory=dict)
    prose: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def fall_back(self, section: str, reason: str) -> None:
        self.fallbacks[section] = reason
        self.narrated.discard(section)
        self.prose.pop(section, None)

    def record(self) -> tuple[tuple[str, ...], int, tuple[Fallback, ...],
                              tuple[NarratedProse, ...]]:
        return (tuple(s for s in ORDER if s in self.narrated), sum(self.dropped.values()),
                tuple(Fallback(section=s, reason=self.fallbacks[s]) for s in ORDER
                      if s in self.fallbacks),
                tuple(NarratedProse(section=s, sentences=self.prose[s]) for s in ORDER
                      if s in self.prose))


def _most_common(reasons: Iterable[str], default: str) -> str:
    counted = Counter(reasons).most_common(1)
    return counted[0][0] if counted else default


def _lost_too_many(lost: int, total: int) -> bool:
    return total > 0 and lost * 2 > total


def risk_index(risk: Risk, answer: PullAnswer | None) -> int | None:
    """The position of a digest risk in its PR's own risk list (the map's indexes)."""
    if answer is None:
        return None
    return next((i for i, r in enumerate(answer.risks) if r == risk), None)


def apply_pulls(digest: Digest, words: Mapping[int, PullWords], failures: Mapping[int, str],
                answers: Mapping[int, PullAnswer], outcome: Outcome) -> Digest:
    """Key PRs and risks in the map's words, where their sections keep enough of them."""
    key_pulls = list(digest.key_pulls)
    lost_reasons = [failures.get(k.number, "verifier") for k in key_pulls
                    if words.get(k.number) is None or words[k.number].summary is None]
    outcome.dropped["key_prs"] = sum(w.dropped for w in words.values())
    if key_pulls and _lost_too_many(len(lost_reasons), len(key_pulls)):
        outcome.fall_back("key_prs", _most_common(lost_reasons, "verifier"))
    elif key_pulls:
        outcome.narrated.add("key_prs")
        for i, k in enumerate(key_pulls):
            w = words.get(k.number)
            if w is not None and w.summary is not None:
                key_pulls[i] = msgspec.structs.replace(
                    k, summary=w.summary, short_title=w.title or k.short_title,
                    figures=tuple(f for f in k.figures if f in w.summary))
    risks = list(digest.risks)
    narrated_risks: dict[int, str] = {}
    lost: list[str] = []
    for i, r in enumerate(risks):
        index = risk_index(r, answers.get(r.pull))
        w = words.get(r.pull)
        text = w.risks.get(index) if w is not None and index is not None else None
        if text is None:
            lost.append(failures.get(r.pull, "verifier"))
        else:
            narrated_risks[i] = text
    if risks and _lost_too_many(len(lost), len(risks)):
        outcome.fall_back("risks", _most_common(lost, "verifier"))
    elif risks:
        outcome.narrated.add("risks")
        risks = [msgspec.structs.replace(r, summary=_clause(narrated_risks[i]), quote=None)
                 if i in narrated_risks else r for i, r in enumerate(risks)]
    return msgspec.structs.replace(digest, key_pulls=tuple(key_pulls), risks=tuple(risks))


def _has_content(digest: Digest, section: str) -> bool:
    """A section the engine left empty ("no changes this week") is not narrated."""
    return {"summary": True, "changes": bool(digest.themes), "trends": True,
            "suggestions": bool(digest.suggestions)}[section]


def apply_week(digest: Digest, answer: WeekNarration | None, failure: str | None,
               grounds: Grounds, lang: Lang, outcome: Outcome) -> Digest:
    """Summary, changes, trends and suggestions in the reduce step's words."""
    suggestions = digest.suggestions
    for section in (*PROSE_SECTIONS, "suggestions"):
        if not _has_content(digest, section):
            continue
        if answer is None:
            outcome.fall_back(section, failure or "error")
            continue
        sentences: list[Sentence] = getattr(answer, section)
        kept = [s.text.strip() for s in sentences
                if check(s.text.strip(), s.pulls, grounds, lang) is None]
        outcome.dropped[section] = len(sentences) - len(kept)
        if not kept:
            outcome.fall_back(section, "verifier" if sentences else "empty")
        elif _lost_too_many(len(sentences) - len(kept), len(sentences)):
            outcome.fall_back(section, "verifier")
        elif section == "suggestions":
            outcome.narrated.add(section)
            suggestions = tuple(kept)
        else:
            outcome.narrated.add(section)
            outcome.prose[section] = tuple(kept)
    return msgspec.structs.replace(digest, suggestions=suggestions)


def _clause(text: str) -> str:
    """A risk's words without their final stop: the risk line adds its own."""
    return text.rstrip("。.")


def narrated_answer(answer: PullAnswer, words: PullWords) -> PullAnswer:
    """A chat answer about one PR in its cached, verified narration."""
    risks = tuple(msgspec.structs.replace(r, summary=_clause(words.risks[i]), quote=None)
                  if i in words.risks else r for i, r in enumerate(answer.risks))
    return msgspec.structs.replace(answer, summary=words.summary or answer.summary,
                                   risks=risks)
