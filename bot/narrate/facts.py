"""The fact pack: what the model is told, all of it decided by the engine.

`PullFacts` is one PR as the map step sees it (its cleaned text, figures, the engine's
summary and risks); `WeekFacts` the week as the reduce step sees it (counts, shares,
topics, hot files, themes, risks and the PRs in the map's words). Both are plain
records, so their JSON is the prompt's data block, the cache key's input and the
verifier's grounds at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

import msgspec

from bot.models import Digest, PullAnswer, PullRequest, Risk
from bot.narrate.figures import percent_forms
from bot.narrate.hygiene import BODY_CHARS, clean
from bot.narrate.verify import Grounds

FILES_SHOWN = 12
THEME_PULLS = 12


class Fact(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of the fact records (defaults left out of their JSON, to save tokens)."""


class RiskFact(Fact, frozen=True, kw_only=True):
    index: int
    severity: str
    finding: str
    path: str = ""
    quote: str = ""


class PullFacts(Fact, frozen=True, kw_only=True):
    number: int
    title: str
    state: str
    type: str = ""
    topics: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    files_changed: int = 0
    additions: int = 0
    deletions: int = 0
    summary: str = ""
    body: str = ""
    risks: tuple[RiskFact, ...] = ()


def pull_facts(pull: PullRequest, answer: PullAnswer) -> PullFacts:
    """One PR's facts: its own text cleaned and cut, the engine's summary and risks."""
    return PullFacts(
        number=pull.number, title=clean(pull.title), state=pull.state, type=answer.type,
        topics=answer.topics, files=tuple(clean(f.path) for f in pull.files[:FILES_SHOWN]),
        files_changed=pull.changed_files or len(pull.files),
        additions=pull.additions or 0, deletions=pull.deletions or 0,
        summary=clean(answer.summary), body=clean(pull.body, BODY_CHARS),
        risks=tuple(risk_fact(i, r) for i, r in enumerate(answer.risks)),
    )


def risk_fact(index: int, risk: Risk) -> RiskFact:
    return RiskFact(index=index, severity=risk.severity, finding=clean(risk.summary),
                    path=clean(risk.path), quote=clean(risk.quote))


def pull_text(facts: PullFacts) -> str:
    """Everything the PR's facts say, for identifiers and figures to be found in."""
    return msgspec.json.encode(facts).decode()


def pull_grounds(facts: PullFacts, week: Iterable[int]) -> Grounds:
    return Grounds.of([facts.number, *week], {facts.number: pull_text(facts)})


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
    key: str
    title: str
    count: int
    pulls: tuple[int, ...]


class WeekRiskFact(Fact, frozen=True, kw_only=True):
    pull: int
    severity: str
    text: str


class PullLine(Fact, frozen=True, kw_only=True):
    number: int
    title: str
    area: str = ""
    summary: str = ""


class WeekFacts(Fact, frozen=True, kw_only=True):
    repository: str
    week: str
    since: str
    until: str
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
    suggestions: tuple[str, ...]
    pulls: tuple[PullLine, ...]


def _count(name: str, count: int, share: float, previous: int | None) -> CountFact:
    return CountFact(name=clean(name), count=count, percent=f"{share * 100:.0f}%",
                     previous=previous)


def week_facts(digest: Digest, lines: Iterable[PullLine],
               risk_texts: Mapping[int, str]) -> WeekFacts:
    """The week for the reduce step; `risk_texts` the risks in the map's words, by
    their position in `digest.risks` (the engine's words where the map has none)."""
    until = digest.period.until
    return WeekFacts(
        repository=digest.repository, week=digest.week,
        since=digest.period.since.strftime("%Y-%m-%d"),
        until=until.strftime("%Y-%m-%d"), total=digest.counts.total, key=digest.counts.key,
        merged=digest.counts.merged, closed=digest.counts.closed, opened=digest.counts.opened,
        topics=tuple(_count(t.name, t.count, t.share, t.previous) for t in digest.topics),
        types=tuple(_count(t.name, t.count, t.share, None) for t in digest.types),
        hot_files=tuple(HotFileFact(path=clean(h.path), pulls=h.pulls, numbers=h.numbers)
                        for h in digest.hot_files),
        # A theme's count is every PR of it, key or not, as its line in the digest says.
        themes=tuple(ThemeFact(key=t.key, title=clean(t.title),
                               count=len(t.pulls) + len(t.others),
                               pulls=t.pulls[:THEME_PULLS]) for t in digest.themes),
        risks=tuple(WeekRiskFact(pull=r.pull, severity=r.severity,
                                 text=risk_texts.get(i, clean(r.summary)))
                    for i, r in enumerate(digest.risks)),
        suggestions=tuple(clean(s) for s in digest.suggestions),
        pulls=tuple(lines),
    )


def week_grounds(digest: Digest, facts: WeekFacts, pulls: Mapping[int, PullFacts]) -> Grounds:
    """Week sentences may state the week's figures (shares also as percentages) and
    name identifiers of the PRs they cite."""
    shares: set[str] = set()
    for item in (*digest.topics, *digest.types):
        shares |= percent_forms(item.share)
    texts = {n: pull_text(f) for n, f in pulls.items()}
    return Grounds.of(pulls.keys(), texts, extra_figures=shares,
                      facts=[msgspec.json.encode(facts).decode()])


def content_hash(*parts: object) -> str:
    """A stable digest of the records and words that decide a model's answer."""
    h = hashlib.sha256()
    for part in parts:
        h.update(msgspec.json.encode(part))
        h.update(b"\x00")
    return h.hexdigest()[:32]
