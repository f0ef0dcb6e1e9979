"""The fact pack: what the model is told, all of it decided by the engine.

`PullFacts` is one PR as its narration sees it (its screened text, sizes, the engine's
risks, what is unknown about it); `WeekFacts` the week as the week's narration sees it:
counts, shares, topics, hot files, themes (every PR of each counted), risks,
suggestions, the lines of the PRs the digest shows, and what the data does not record.
The week is told in the engine's facts only, never in a model's words: one PR's
narration can't carry text into another call. A PR whose text carries instructions
aimed at a model is `withheld`: its own words are not sent at all.

Both are plain records, so their JSON is the prompt's data block, the cache key's input
and the verifier's grounds at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import timedelta

import msgspec

from bot.engine.text import plain
from bot.models import Digest, PullAnswer, PullRequest, Risk
from bot.narrate.figures import PULL_REF
from bot.narrate.hygiene import BODY_CHARS, TEXT_CHARS, clean
from bot.narrate.injection import screen
from bot.narrate.wording import engine_summary, theme_cited, theme_room

FILES_SHOWN = 12
THEME_PULLS = 24
"""PRs of a theme its narration is told of (every PR of all but the largest themes)."""
LINE_CHARS = 160


class Fact(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of the fact records (defaults left out of their JSON, to save tokens)."""


class RiskFact(Fact, frozen=True, kw_only=True):
    """A risk as the engine found it; `subjects`: the code the concern names,
    `author` who raised it."""

    index: int
    severity: str
    finding: str
    author: str = ""
    path: str = ""
    subjects: tuple[str, ...] = ()
    quote: str = ""


class PullFacts(Fact, frozen=True, kw_only=True):
    """One PR. Recorded (what a claim in the digest's voice may rest on): `type`,
    `topics`, `labels`, `security` (the engine's label), `reviews`, `checks` and
    `measured` (the figures the engine took from it); its own text (`title`, `body`,
    risk quotes) grounds only what the narration attributes to it."""

    number: int
    title: str = ""
    headline: str = ""
    author: str = ""
    state: str
    type: str = ""
    topics: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    security: bool = False
    measured: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    files_changed: int = 0
    additions: int = 0
    deletions: int = 0
    body: str = ""
    risks: tuple[RiskFact, ...] = ()
    checks: str = "unknown"
    reviews: str = "not recorded"
    withheld: bool = False
    summarize: bool = True
    """Whether its summary is asked for: a PR the digest shows only for its risks is
    asked for its risk lines alone."""


def _screened(text: str | None, limit: int) -> str:
    """PR text as the model may read it: plain, cleaned, cut, readers' orders left out."""
    return clean(screen(plain(text or "")).text, limit)


def _reviews(pull: PullRequest) -> str:
    if pull.reviews is None or not pull.reviews:
        return "not recorded" if pull.reviews is None else "none"
    states = {r.state for r in pull.reviews}
    return "approved" if "APPROVED" in states and "CHANGES_REQUESTED" not in states \
        else "changes requested" if "CHANGES_REQUESTED" in states else "commented"


def pull_facts(pull: PullRequest, answer: PullAnswer, *, withheld: bool = False,
               reviews_recorded: bool = True, security: bool = False) -> PullFacts:
    """One PR's facts; a withheld PR's carry none of its own words (title, body,
    quotes): only what the engine measured and decided."""
    files = tuple(clean(f.path) for f in pull.files[:FILES_SHOWN])
    risks = tuple(risk_fact(i, r, quote=not withheld) for i, r in enumerate(answer.risks))
    body = "" if withheld else _screened(pull.body, BODY_CHARS)
    if not withheld and not body:
        body = clean(answer.summary)
    return PullFacts(
        number=pull.number, title="" if withheld else _screened(pull.title, TEXT_CHARS),
        headline="" if withheld else _screened(answer.headline, TEXT_CHARS),
        author=clean(pull.author or ""), state=pull.state,
        type=answer.type, topics=answer.topics,
        labels=tuple(clean(label) for label in pull.labels), security=security,
        measured=tuple(clean(f) for f in answer.figures), files=files,
        files_changed=pull.changed_files or len(pull.files),
        additions=pull.additions or 0, deletions=pull.deletions or 0, body=body,
        risks=risks, checks=pull.checks or "unknown",
        reviews=_reviews(pull) if reviews_recorded else "not recorded", withheld=withheld)



def risk_fact(index: int, risk: Risk, *, quote: bool = True) -> RiskFact:
    return RiskFact(index=index, severity=risk.severity, finding=clean(risk.summary),
                    author=clean(risk.author or ""), path=clean(risk.path),
                    subjects=tuple(clean(s) for s in risk.subjects),
                    quote=_screened(risk.quote, TEXT_CHARS) if quote else "")


def pull_text(facts: Fact) -> str:
    """Everything a fact record says, for identifiers and figures to be found in."""
    return msgspec.json.encode(facts).decode()


class CountFact(Fact, frozen=True, kw_only=True):
    name: str
    count: int
    percent: str
    previous: int | None = None


class HotFileFact(Fact, frozen=True, kw_only=True):
    path: str
    pulls: int
    numbers: tuple[int, ...]


class ThemeFact(Fact, frozen=True, kw_only=True):
    """A theme the digest shows: `pulls` its PRs (key PRs first), `cite` those the
    engine's own key changes name, `sentences` how many it may take."""

    key: str
    title: str
    count: int
    pulls: tuple[int, ...]
    cite: tuple[int, ...] = ()
    sentences: int = 1


class WeekRiskFact(Fact, frozen=True, kw_only=True):
    pull: int
    severity: str
    text: str


class SuggestionFact(Fact, frozen=True, kw_only=True):
    index: int
    text: str
    pulls: tuple[int, ...] = ()


class PullLine(Fact, frozen=True, kw_only=True):
    """A PR the digest shows, as it shows it: title, its Chinese headline (zh), line."""

    number: int
    title: str = ""
    headline: str = ""
    line: str = ""
    type: str = ""
    security: bool = False
    withheld: bool = False


class WeekFacts(Fact, frozen=True, kw_only=True):
    repository: str
    week: str
    first_day: str
    last_day: str
    total: int
    key: int
    merged: int
    closed: int
    opened: int
    topics: tuple[CountFact, ...]
    types: tuple[CountFact, ...]
    hot_files: tuple[HotFileFact, ...]
    themes: tuple[ThemeFact, ...]
    risks: tuple[WeekRiskFact, ...]
    suggestions: tuple[SuggestionFact, ...]
    pulls: tuple[PullLine, ...]
    highlights: tuple[int, ...] = ()
    """The PRs the engine's own summary names: the summary names them too."""
    unknown: tuple[str, ...] = ()
    """What the data does not record (check states, review resolutions): no claim
    about these may be made."""


def _count(name: str, count: int, share: float, previous: int | None) -> CountFact:
    return CountFact(name=clean(name), count=count, percent=f"{share * 100:.0f}%",
                     previous=previous)


def theme_pulls(shown: Iterable[int], others: Iterable[int]) -> tuple[int, ...]:
    """Every PR of a theme: those it shows, then the rest."""
    return (*shown, *others)


def shown_pulls(digest: Digest, quick: int) -> list[int]:
    """The PRs the week's narration is told of by line: key PRs of the quick view, risk
    PRs, the PRs its suggestions name, then every PR of each theme it shows (key PRs
    first, up to `THEME_PULLS`), in that order, each once."""
    order = [k.number for k in digest.key_pulls[:quick]]
    order += [r.pull for r in digest.risks]
    order += [int(n) for s in digest.suggestions for n in PULL_REF.findall(s)]
    order += [n for t in digest.themes if t.pulls or t.others
              for n in theme_pulls(t.pulls, t.others)[:THEME_PULLS]]
    return list(dict.fromkeys(order))


def _line(digest: Digest, number: int, withheld: bool) -> PullLine:
    key = next((k for k in digest.key_pulls if k.number == number), None)
    entry = next((p for p in digest.pulls if p.number == number), None)
    kind = key.type if key else entry.type if entry else ""
    security = bool(entry and entry.security)
    if withheld:
        return PullLine(number=number, type=kind, security=security, withheld=True)
    title = key.title if key else entry.title if entry else ""
    headline = key.headline if key else entry.headline if entry else ""
    line = key.line if key else entry.line if entry else ""
    return PullLine(number=number, title=_screened(title, TEXT_CHARS),
                    headline=_screened(headline, TEXT_CHARS),
                    line=_screened(line, LINE_CHARS) if line != title else "", type=kind,
                    security=security)


def week_facts(digest: Digest, shown: Iterable[int], withheld: frozenset[int]) -> WeekFacts:
    """The week for its narration, from the engine's digest alone."""
    last_day = digest.period.until - timedelta(seconds=1)
    return WeekFacts(
        repository=digest.repository, week=digest.week,
        first_day=digest.period.since.strftime("%Y-%m-%d"),
        last_day=last_day.strftime("%Y-%m-%d"), total=digest.counts.total,
        key=digest.counts.key, merged=digest.counts.merged, closed=digest.counts.closed,
        opened=digest.counts.opened,
        # The areas, as the digest's trends and "Compared with last week" count them.
        topics=tuple(_count(t.name, t.count, t.share, t.previous)
                     for t in digest.areas or digest.topics),
        types=tuple(_count(t.name, t.count, t.share, None) for t in digest.types),
        hot_files=tuple(HotFileFact(path=clean(h.path), pulls=h.pulls, numbers=h.numbers)
                        for h in digest.hot_files),
        themes=tuple(ThemeFact(key=t.key, title=clean(t.title),
                               count=len(theme_pulls(t.pulls, t.others)),
                               pulls=theme_pulls(t.pulls, t.others)[:THEME_PULLS],
                               cite=theme_cited(t),
                               sentences=theme_room(len(t.pulls) + len(t.others)))
                     for t in digest.themes if t.pulls or t.others),
        risks=tuple(WeekRiskFact(pull=r.pull, severity=r.severity, text=clean(r.summary))
                    for r in digest.risks),
        suggestions=tuple(_suggestion(i, s, withheld) for i, s in enumerate(digest.suggestions)),
        pulls=tuple(_line(digest, n, n in withheld) for n in shown),
        highlights=tuple(int(n) for s in engine_summary(digest)[1:-1]
                         for n in PULL_REF.findall(s)),
        unknown=tuple(clean(note) for note in digest.notes),
    )


def _suggestion(index: int, text: str, withheld: frozenset[int]) -> SuggestionFact:
    refs = tuple(dict.fromkeys(int(n) for n in PULL_REF.findall(text)))
    said = _screened(text, TEXT_CHARS)
    if any(n in withheld for n in refs):
        said = _unquoted(said)
    return SuggestionFact(index=index, text=said, pulls=refs)


def _unquoted(text: str) -> str:
    """A suggestion about a withheld PR without the PR's words it quotes."""
    out, depth = [], 0
    for char in text:
        if char in "“\"":
            depth += 1 if char == "“" or depth == 0 else -1
            continue
        if char == "”":
            depth = max(0, depth - 1)
            continue
        if depth == 0:
            out.append(char)
    return "".join(out).replace("（）", "").replace("()", "")


def content_hash(*parts: object) -> str:
    """A stable digest of the records and words that decide a model's answer."""
    h = hashlib.sha256()
    for part in parts:
        h.update(msgspec.json.encode(part))
        h.update(b"\x00")
    return h.hexdigest()[:32]
