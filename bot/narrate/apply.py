"""From the model's answers to a narrated digest: every sentence verified against what
it cites, repeats dropped, each section capped, and a section takes the narrated words
only when it keeps at least half of them; otherwise, or when its call failed, it stays
exactly as the engine wrote it.

A section never loses content by being narrated: the summary keeps the engine's own
sentence for the PR count and for the risk count when the model's version of either
was dropped; a theme or a suggestion whose sentence was dropped is written from the
engine's facts; a narrated risk keeps the engine's PR, path, severity and quote.

Pure functions over records: no calls, no clock, no store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from bot.i18n import Translator
from bot.models import Digest, Fallback, Lang, NarratedProse, PullAnswer, Risk
from bot.narrate.figures import figures_in
from bot.narrate.grounds import Evidence
from bot.narrate.normal import folded, visible
from bot.narrate.rules import Part, prose_of
from bot.narrate.schema import PullNarration, WeekNarration
from bot.narrate.settled import states_open
from bot.narrate.verify import Scope, check
from bot.narrate.wording import engine_summary

PROSE_SECTIONS = ("summary", "changes", "trends")
"""Sections narrated as sentences shown in place of the engine's paragraph or list."""
ORDER = ("summary", "changes", "trends", "risks", "key_prs", "suggestions")
SUMMARY_MAX = 5
TRENDS_MAX = 4
TITLE_MAX = 60


@dataclass(frozen=True)
class Candidate:
    """A sentence that passed the rules, with what it cites (for the second pass)."""

    text: str
    scope: Scope
    where: str
    """`pull:N:summary`, `pull:N:risk:I`, `summary`, `changes:KEY`, ..."""


@dataclass(frozen=True)
class PullWords:
    """One PR's verified narration: what survived the verifier (None: dropped)."""

    number: int
    title: str | None
    summary: str | None
    risks: Mapping[int, str]
    dropped: int


class Seen:
    """Sentences already kept in this digest, by their folded text: a repeat is dropped."""

    def __init__(self) -> None:
        self._texts: set[str] = set()

    def first(self, text: str) -> bool:
        key = "".join(folded(text).casefold().split()).rstrip("。.")
        if key in self._texts:
            return False
        self._texts.add(key)
        return True


def _kept(text: str, scope: Scope, part: Part, lang: Lang) -> str | None:
    shown = visible(text).strip()
    return shown if check(shown, scope, part, lang) is None else None


def verify_pull(answer: PullNarration, evidence: Evidence, risks: Sequence[Risk],
                lang: Lang) -> PullWords:
    """Every field of a PR's answer checked against that PR's own facts; a risk line
    must also keep the finding's path and the code it names."""
    scope = evidence.pull(answer.number)
    dropped = 0

    def keep(text: str, part: Part) -> str | None:
        nonlocal dropped
        kept = _kept(text, scope, part, lang)
        dropped += kept is None
        return kept

    title = keep(answer.title, "title") if len(answer.title.strip()) <= TITLE_MAX else None
    summary = keep(answer.summary, "summary")
    lines: dict[int, str] = {}
    for note in answer.risks:
        if not 0 <= note.index < len(risks) or note.index in lines:
            continue
        text = keep(note.text, "risk")
        if text is not None and _keeps_finding(text, risks[note.index]):
            lines[note.index] = text
        elif text is not None:
            dropped += 1
    return PullWords(number=answer.number, title=title, summary=summary, risks=lines,
                     dropped=dropped + (title is None and summary is None))


def _keeps_finding(text: str, risk: Risk) -> bool:
    """Whether a risk line still names where the concern is and what code it is about,
    and, for a concern whose resolution is open or unknown, still says so."""
    read = folded(text).casefold()
    if risk.resolution != "not-applicable" and not states_open(prose_of(read)):
        return False
    return all(name.casefold() in read for name in (risk.path or "", *risk.subjects) if name)


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
    """The position of a digest risk in its PR's own risk list (the answers' indexes)."""
    if answer is None:
        return None
    return next((i for i, r in enumerate(answer.risks) if r == risk), None)


def apply_pulls(digest: Digest, words: Mapping[int, PullWords], failures: Mapping[int, str],
                answers: Mapping[int, PullAnswer], shown: Sequence[int],
                outcome: Outcome) -> Digest:
    """Key PRs and risks in the PRs' own narrations, where their sections keep enough.
    `shown`: the key PRs the digest shows (the others keep the engine's words)."""
    key_pulls = list(digest.key_pulls)
    visible_keys = [k for k in key_pulls if k.number in shown]
    lost_reasons = [failures.get(k.number, "verifier") for k in visible_keys
                    if words.get(k.number) is None or words[k.number].summary is None]
    outcome.dropped["key_prs"] = sum(w.dropped for w in words.values())
    if visible_keys and _lost_too_many(len(lost_reasons), len(visible_keys)):
        outcome.fall_back("key_prs", _most_common(lost_reasons, "verifier"))
    elif visible_keys:
        outcome.narrated.add("key_prs")
        for i, k in enumerate(key_pulls):
            w = words.get(k.number)
            if k.number in shown and w is not None and w.summary is not None:
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
        # The engine's finding stays: PR, path, severity, evidence and quote; only the
        # sentence that states it is the narrator's.
        risks = [msgspec.structs.replace(r, summary=_clause(narrated_risks[i]))
                 if i in narrated_risks else r for i, r in enumerate(risks)]
    return msgspec.structs.replace(digest, key_pulls=tuple(key_pulls), risks=tuple(risks))


def verify_week(answer: WeekNarration, evidence: Evidence,
                lang: Lang) -> dict[str, list[Candidate]]:
    """The week's sentences that pass the rules, by section (themes and suggestions
    keyed by what they restate)."""
    out: dict[str, list[Candidate]] = {s: [] for s in (*PROSE_SECTIONS, "suggestions")}
    for section, sentences in (("summary", answer.summary), ("trends", answer.trends)):
        for s in sentences:
            scope = evidence.week_sentence(s.pulls)
            if (kept := _kept(s.text, scope, "week", lang)) is not None:
                out[section].append(Candidate(kept, scope, section))
    for t in answer.changes:
        scope = evidence.theme_sentence(t.theme, t.pulls)
        if t.theme in evidence.themes and (kept := _kept(t.text, scope, "changes", lang)):
            out["changes"].append(Candidate(kept, scope, f"changes:{t.theme}"))
    for g in answer.suggestions:
        scope = evidence.suggestion(g.index, g.pulls)
        if g.index in evidence.suggestions and (
                kept := _kept(g.text, scope, "suggestion", lang)):
            out["suggestions"].append(Candidate(kept, scope, f"suggestions:{g.index}"))
    return out


def _has_content(digest: Digest, section: str) -> bool:
    """A section the engine left empty ("no changes this week") is not narrated."""
    return {"summary": True, "changes": any(t.pulls for t in digest.themes), "trends": True,
            "suggestions": bool(digest.suggestions), "risks": bool(digest.risks),
            "key_prs": bool(digest.key_pulls)}[section]


def fallbacks_for(digest: Digest, reason: str) -> tuple[Fallback, ...]:
    """Every section with content, fallen back for `reason`."""
    return tuple(Fallback(section=s, reason=reason) for s in ORDER if _has_content(digest, s))


def apply_week(digest: Digest, kept: Mapping[str, list[Candidate]] | None, written: int,
               failure: str | None, outcome: Outcome, seen: Seen) -> Digest:
    """Summary, changes, trends and suggestions in the week's narration; `written` is
    how many sentences the model wrote, `kept` what survived, by section."""
    suggestions = digest.suggestions
    for section in (*PROSE_SECTIONS, "suggestions"):
        if not _has_content(digest, section):
            continue
        if kept is None:
            outcome.fall_back(section, failure or "error")
            continue
        chosen = [c for c in kept[section] if seen.first(c.text)]
        if section == "summary":
            result = _summary(digest, [c.text for c in chosen])
        elif section == "trends":
            result = [c.text for c in chosen][:TRENDS_MAX]
            result = result if result else None
        elif section == "changes":
            result = _changes(digest, chosen)
        else:
            result = _suggestions(digest, chosen)
        if result is None:
            outcome.fall_back(section, "verifier" if written else "empty")
        elif section == "suggestions":
            outcome.narrated.add(section)
            suggestions = tuple(result)
        else:
            outcome.narrated.add(section)
            outcome.prose[section] = tuple(result)
    return msgspec.structs.replace(digest, suggestions=suggestions)


def _summary(digest: Digest, chosen: list[str]) -> list[str] | None:
    """The summary's sentences: the engine's count and risk sentences stand in for the
    model's when it dropped (or never wrote) them."""
    if not chosen:
        return None
    engine = engine_summary(digest)
    if not engine:
        return None
    total = str(digest.counts.total)
    head = [] if any(total in figures_in(s) for s in chosen) else [engine[0]]
    risks = str(len(digest.risks))
    told = next((s for s in chosen if _mentions_risk(s) and (
        risks in figures_in(s) or not digest.risks)), None)
    # The risk count ends the summary, the model's sentence or the engine's.
    tail = [told] if told is not None else [] if len(engine) < 2 else [engine[-1]]
    rest = [s for s in chosen if s is not told]
    room = SUMMARY_MAX - len(head) - len(tail)
    return [*head, *rest[:room], *tail]


def _mentions_risk(text: str) -> bool:
    return "风险" in text or "risk" in text.casefold()


def _changes(digest: Digest, chosen: list[Candidate]) -> list[str] | None:
    """One sentence per theme the engine shows, in its order; a theme without one gets
    the engine's facts in a sentence. None when the model wrote less than half."""
    by_theme: dict[str, str] = {}
    for c in chosen:
        by_theme.setdefault(c.where.split(":", 1)[1], c.text)
    themes = [t for t in digest.themes if t.pulls]
    if _lost_too_many(sum(t.key not in by_theme for t in themes), len(themes)):
        return None
    t = Translator(digest.lang)
    out = []
    for theme in themes:
        if theme.key in by_theme:
            out.append(by_theme[theme.key])
            continue
        refs = t.sep.join(f"#{n}" for n in theme.pulls[:3])
        out.append(t.n("%(theme)s: %(num)s PR, %(refs)s.",
                       "%(theme)s: %(num)s PRs, among them %(refs)s.",
                       len(theme.pulls) + len(theme.others), theme=theme.title, refs=refs))
    return out


def _suggestions(digest: Digest, chosen: list[Candidate]) -> list[str] | None:
    """Each engine suggestion in the model's words where they held, else its own."""
    by_index: dict[int, str] = {}
    for c in chosen:
        by_index.setdefault(int(c.where.split(":", 1)[1]), c.text)
    total = len(digest.suggestions)
    if _lost_too_many(total - len(by_index), total):
        return None
    return [by_index.get(i, text) for i, text in enumerate(digest.suggestions)]


def _clause(text: str) -> str:
    """A risk's words without their final stop: the risk line adds its own."""
    return text.rstrip("。.")


def narrated_answer(answer: PullAnswer, words: PullWords) -> PullAnswer:
    """A chat answer about one PR in its cached, verified narration."""
    risks = tuple(msgspec.structs.replace(r, summary=_clause(words.risks[i]))
                  if i in words.risks else r for i, r in enumerate(answer.risks))
    return msgspec.structs.replace(answer, summary=words.summary or answer.summary,
                                   risks=risks)
