"""From the model's answers to a narrated digest: every sentence verified against what
it cites, repeats dropped, each section capped, and a section takes the narrated words
only when it keeps at least half of them; otherwise, or when its call failed, it stays
exactly as the engine wrote it. Every sentence that does not reach the digest is
recorded with its rule (`bot.narrate.ledger`).

A section is never thinner for being narrated: the summary keeps the engine's own
sentence for the PR count, for the PRs it names and for the risk count where the
model's did not hold; a theme whose sentences were dropped is said in the engine's own
lines, and one whose sentences leave out PRs the engine's key changes name gets them
added in those lines; a suggestion whose sentence was dropped is the engine's; a
narrated risk keeps the engine's PR, path, severity and quote.

Pure functions over records: no calls, no clock, no store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from bot.models import Digest, Fallback, Lang, PullAnswer, Risk
from bot.narrate.figures import PULL_REF, figures_in
from bot.narrate.grounds import Evidence
from bot.narrate.ledger import ORDER, Outcome
from bot.narrate.normal import folded, visible
from bot.narrate.rules import Part, prose_of
from bot.narrate.schema import PullNarration, WeekNarration
from bot.narrate.settled import states_open
from bot.narrate.verify import Scope, check
from bot.narrate.wording import (
    engine_also,
    engine_highlights,
    engine_summary,
    engine_theme,
    theme_cited,
    theme_room,
)

PROSE_SECTIONS = ("summary", "changes", "trends")
"""Sections narrated as sentences shown in place of the engine's paragraph or list."""
SUMMARY_MAX = 5
"""The model's summary sentences kept at most (the engine's added ones besides)."""
TRENDS_MAX = 4

Drop = tuple[str, str]
"""Where a sentence was going and the rule that dropped it."""


@dataclass(frozen=True)
class Candidate:
    """A sentence that passed the rules, with what it cites (for the second pass)."""

    text: str
    scope: Scope
    where: str
    """`summary`, `trends`, `changes:KEY`, `suggestions:I`."""


@dataclass(frozen=True)
class PullWords:
    """One PR's verified narration: what survived the verifier (None: dropped), and
    what was dropped, with its rule."""

    number: int
    summary: str | None
    risks: Mapping[int, str]
    drops: tuple[Drop, ...] = ()


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


def _checked(text: str, scope: Scope, part: Part, lang: Lang) -> tuple[str, str | None]:
    shown = visible(text).strip()
    return shown, check(shown, scope, part, lang)


def verify_pull(answer: PullNarration, evidence: Evidence, risks: Sequence[Risk],
                lang: Lang, *, summarize: bool = True) -> PullWords:
    """Every field of a PR's answer checked against that PR's own facts (a risk line
    against its own finding's); a risk line must also keep the finding's path and the
    code it names. `summarize`: whether the PR's summary was asked for."""
    number = answer.number
    drops: list[Drop] = []
    summary: str | None = None
    if answer.summary.strip():
        text, problem = _checked(answer.summary, evidence.pull(number), "summary", lang)
        problem = problem if summarize else "unasked"
        if problem is None:
            summary = text
        else:
            drops.append((f"pull:{number}:summary", problem))
    lines: dict[int, str] = {}
    for note in answer.risks:
        where = f"pull:{number}:risk:{note.index}"
        if not note.text.strip():
            continue
        if not 0 <= note.index < len(risks):
            drops.append((where, "unknown-risk"))
            continue
        if note.index in lines:
            drops.append((where, "repeat"))
            continue
        text, problem = _checked(note.text, evidence.risk(number, note.index), "risk", lang)
        if problem is None and not _keeps_finding(text, risks[note.index]):
            problem = "finding"
        if problem is None:
            lines[note.index] = text
        else:
            drops.append((where, problem))
    return PullWords(number=number, summary=summary, risks=lines, drops=tuple(drops))


def _keeps_finding(text: str, risk: Risk) -> bool:
    """Whether a risk line still names where the concern is and what code it is about,
    and, for a concern whose resolution is open or unknown, still says so."""
    read = folded(text).casefold()
    if risk.resolution != "not-applicable" and not states_open(prose_of(read)):
        return False
    return all(name.casefold() in read for name in (risk.path or "", *risk.subjects) if name)


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
    for told in words.values():
        for where, rule in told.drops:
            outcome.drop(where, rule)
    used: set[str] = set()
    key_pulls = list(digest.key_pulls)
    visible_keys = [k for k in key_pulls if k.number in shown]
    lost_reasons = [failures.get(k.number, "verifier") for k in visible_keys
                    if words.get(k.number) is None or words[k.number].summary is None]
    told_keys: list[str] = []
    told_numbers: list[str] = []
    if visible_keys and not _lost_too_many(len(lost_reasons), len(visible_keys)):
        for i, k in enumerate(key_pulls):
            w = words.get(k.number)
            if k.number in shown and w is not None and w.summary is not None:
                # The PR keeps its own title: only the sentence that says it is narrated.
                key_pulls[i] = msgspec.structs.replace(
                    k, summary=w.summary, figures=tuple(f for f in k.figures if f in w.summary))
                used.add(f"pull:{k.number}:summary")
                told_keys.append(w.summary)
                told_numbers.append(str(k.number))
        outcome.tell("key_prs", told_keys, told_numbers)
    elif visible_keys:
        outcome.fall_back("key_prs", _most_common(lost_reasons, "verifier"))
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
        for i, r in enumerate(risks):
            if i in narrated_risks:
                used.add(f"pull:{r.pull}:risk:{risk_index(r, answers.get(r.pull))}")
                risks[i] = msgspec.structs.replace(r, summary=_clause(narrated_risks[i]))
    for told in words.values():
        kept = ([f"pull:{told.number}:summary"] if told.summary is not None else []) + \
            [f"pull:{told.number}:risk:{i}" for i in told.risks]
        for where in kept:
            if where not in used:
                section = "key_prs" if where.endswith(":summary") else "risks"
                outcome.drop(where, "section" if section in outcome.fallbacks else "not-shown")
    return msgspec.structs.replace(digest, key_pulls=tuple(key_pulls), risks=tuple(risks))


def verify_week(answer: WeekNarration, evidence: Evidence, lang: Lang
                ) -> tuple[dict[str, list[Candidate]], list[Drop]]:
    """The week's sentences that pass the rules, by section (themes and suggestions
    keyed by what they restate), and those that did not, with their rules."""
    out: dict[str, list[Candidate]] = {s: [] for s in (*PROSE_SECTIONS, "suggestions")}
    drops: list[Drop] = []

    def consider(section: str, where: str, text: str, scope: Scope | None, part: Part
                 ) -> None:
        if not text.strip():
            return
        if scope is None:
            drops.append((where, "unknown-item"))
            return
        shown, problem = _checked(text, scope, part, lang)
        if problem is None:
            out[section].append(Candidate(shown, scope, where))
        else:
            drops.append((where, problem))

    for section, sentences in (("summary", answer.summary), ("trends", answer.trends)):
        for s in sentences:
            consider(section, section, s.text, evidence.week_sentence(s.pulls), "week")
    for t in answer.changes:
        scope = evidence.theme_sentence(t.theme, t.pulls) if t.theme in evidence.themes \
            else None
        consider("changes", f"changes:{t.theme}", t.text, scope, "changes")
    for g in answer.suggestions:
        scope = evidence.suggestion(g.index, g.pulls) if g.index in evidence.suggestions \
            else None
        consider("suggestions", f"suggestions:{g.index}", g.text, scope, "suggestion")
    return out, drops


def _has_content(digest: Digest, section: str) -> bool:
    """A section the engine left empty ("no changes this week") is not narrated."""
    return {"summary": True, "changes": any(t.pulls for t in digest.themes), "trends": True,
            "suggestions": bool(digest.suggestions), "risks": bool(digest.risks),
            "key_prs": bool(digest.key_pulls)}[section]


def fallbacks_for(digest: Digest, reason: str) -> tuple[Fallback, ...]:
    """Every section with content, fallen back for `reason`."""
    return tuple(Fallback(section=s, reason=reason) for s in ORDER if _has_content(digest, s))


def apply_week(digest: Digest, kept: Mapping[str, list[Candidate]] | None, drops: list[Drop],
               written: int, failure: str | None, outcome: Outcome, seen: Seen) -> Digest:
    """Summary, changes, trends and suggestions in the week's narration; `written` is
    how many sentences the model wrote, `kept` what survived, by section, `drops` what
    did not."""
    for where, rule in drops:
        outcome.drop(where, rule)
    suggestions = digest.suggestions
    for section in (*PROSE_SECTIONS, "suggestions"):
        if kept is None:
            if _has_content(digest, section):
                outcome.fall_back(section, failure or "error")
            continue
        chosen: list[Candidate] = []
        for c in kept[section]:
            if seen.first(c.text):
                chosen.append(c)
            else:
                outcome.drop(c.where, "repeat")
        if not _has_content(digest, section):
            for c in chosen:
                outcome.drop(c.where, "not-shown")
            continue
        if section == "summary":
            result = _summary(digest, chosen, outcome)
        elif section == "trends":
            for c in chosen[TRENDS_MAX:]:
                outcome.drop(c.where, "cap")
            result = ([c.text for c in chosen[:TRENDS_MAX]], []) if chosen else None
        elif section == "changes":
            result = _changes(digest, chosen, outcome)
        else:
            result = _suggestions(digest, chosen, outcome)
        if result is None:
            outcome.fall_back(section, "verifier" if written else "empty")
            for c in chosen:
                outcome.drop(c.where, "section")
        elif section == "suggestions":
            outcome.narrated.add(section)
            suggestions = tuple(result[0])
        else:
            outcome.tell(section, *result)
    return msgspec.structs.replace(digest, suggestions=suggestions)


def _refs(text: str) -> set[int]:
    return {int(n) for n in PULL_REF.findall(text)}


def _role(digest: Digest, text: str) -> str:
    """What a summary sentence does: states the week's count, names highlights (PRs),
    states the risks, or says where the work went."""
    if _mentions_risk(text) and (str(len(digest.risks)) in figures_in(text)
                                 or not digest.risks):
        return "risk"
    if str(digest.counts.total) in figures_in(text) and not _refs(text):
        return "count"
    return "highlight" if _refs(text) else "focus"


def _summary(digest: Digest, chosen: list[Candidate], outcome: Outcome
             ) -> tuple[list[str], list[str]] | None:
    """The summary's sentences and their roles: the engine's count, highlight and risk
    sentences stand in for the model's where it dropped (or never wrote) them, so it
    names at least the PRs the engine's summary names."""
    if not chosen:
        return None
    engine = engine_summary(digest)
    if not engine:
        return None
    told = [(c, _role(digest, c.text)) for c in chosen]
    roles = {r for _, r in told}
    head = [] if "count" in roles else [(engine[0], "count")]
    risk = next(((c.text, r) for c, r in told if r == "risk"), None)
    tail = [risk] if risk is not None else [] if len(engine) < 2 else [(engine[-1], "risk")]
    named = set().union(*(_refs(c.text) for c in chosen))
    missing = [int(n) for s in engine[1:-1] for n in PULL_REF.findall(s)
               if int(n) not in named]
    added = [(engine_highlights(digest, list(dict.fromkeys(missing))), "added")] \
        if missing else []
    body = [(c.text, r) for c, r in told if r != "risk"]
    # The engine's sentences added for the PRs it names do not take the model's room.
    room = SUMMARY_MAX - len(head) - len(tail)
    # Over the cap, what says where the work went gives way before what names PRs.
    while len(body) > max(0, room):
        victim = next((i for i in range(len(body) - 1, -1, -1) if body[i][1] == "focus"),
                      len(body) - 1)
        text = body.pop(victim)[0]
        outcome.drop(next(c.where for c in chosen if c.text == text), "cap")
    for c, r in told:
        if r == "risk" and risk is not None and c.text != risk[0]:
            outcome.drop(c.where, "repeat")
    lines = [*head, *body, *added, *tail]
    return [s for s, _ in lines], [r for _, r in lines]


def _mentions_risk(text: str) -> bool:
    return "风险" in text or "risk" in text.casefold()


def _changes(digest: Digest, chosen: list[Candidate], outcome: Outcome
             ) -> tuple[list[str], list[str]] | None:
    """The sentences of each theme the engine shows, in its order (a large theme up to
    three); a theme without one is said in the engine's lines, and the PRs the engine
    names that a theme's sentences leave out are added in those lines. None when the
    model wrote less than half of the themes."""
    by_theme: dict[str, list[Candidate]] = {}
    for c in chosen:
        by_theme.setdefault(c.where.split(":", 1)[1], []).append(c)
    themes = [t for t in digest.themes if t.pulls or t.others]
    for key in set(by_theme) - {t.key for t in themes}:
        for c in by_theme[key]:
            outcome.drop(c.where, "not-shown")
    if _lost_too_many(sum(t.key not in by_theme for t in themes), len(themes)):
        return None
    out: list[str] = []
    keys: list[str] = []
    for theme in themes:
        said = by_theme.get(theme.key, [])
        room = theme_room(len(theme.pulls) + len(theme.others))
        for c in said[room:]:
            outcome.drop(c.where, "cap")
        said = said[:room]
        if not said:
            out.append(engine_theme(digest, theme))
            keys.append(theme.key)
            continue
        out += [c.text for c in said]
        keys += [theme.key] * len(said)
        cited = set().union(*(_refs(c.text) | c.scope.cited for c in said))
        missing = [n for n in theme_cited(theme) if n not in cited]
        if missing:
            out.append(engine_also(digest, theme, missing))
            keys.append(theme.key)
    return out, keys


def _suggestions(digest: Digest, chosen: list[Candidate], outcome: Outcome
                 ) -> tuple[list[str], list[str]] | None:
    """Each engine suggestion in the model's words where they held, else its own."""
    by_index: dict[int, str] = {}
    for c in chosen:
        index = int(c.where.split(":", 1)[1])
        if index in by_index:
            outcome.drop(c.where, "repeat")
        else:
            by_index[index] = c.text
    total = len(digest.suggestions)
    if _lost_too_many(total - len(by_index), total):
        return None
    return [by_index.get(i, text) for i, text in enumerate(digest.suggestions)], []


def _clause(text: str) -> str:
    """A risk's words without their final stop: the risk line adds its own."""
    return text.rstrip("。.")


def narrated_answer(answer: PullAnswer, words: PullWords) -> PullAnswer:
    """A chat answer about one PR in its cached, verified narration."""
    risks = tuple(msgspec.structs.replace(r, summary=_clause(words.risks[i]))
                  if i in words.risks else r for i, r in enumerate(answer.risks))
    return msgspec.structs.replace(answer, summary=words.summary or answer.summary,
                                   risks=risks)
