"""What each narrated sentence may state, from the fact pack: a PR's narration its own
facts; a week sentence the week's counts plus the facts of the PRs it cites; a theme's
sentence also only that theme's PRs; a suggestion's only what that suggestion names.

Figures are read from the facts with their code spans (a `--max-tokens 4096` is a
figure of the PR) but never from PR numbers; a PR number is allowed where the week
holds it, or where the cited PR's own facts name it and it is not beyond the newest
PR the data knows (`#99999` in a week of PRs below 8000 is not a reference).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

import msgspec

from bot.engine.lexicon import lexicon
from bot.narrate.claims import Counted, Grounds, PullClaims, unit_figures
from bot.narrate.facts import PullFacts, WeekFacts, pull_text
from bot.narrate.figures import PULL_REF, figures_in, percent_forms
from bot.narrate.normal import folded
from bot.narrate.verify import Scope


def _figures(text: str) -> frozenset[str]:
    return frozenset(figures_in(text.replace("`", " ")))


def _read(text: str) -> str:
    return folded(text).casefold()


_TOKEN = re.compile(r"[A-Za-z0-9_./<>|=:-]+")
_CODE = re.compile(r"`([^`\n]+)`")


def identifiers(*texts: str) -> str:
    """What in `texts` reads as code: code spans, and words written as code (with `_`
    or `/`, camelCase, `<|token|>`). Prose words are not identifiers: a host written in
    a title (`evil.sh`) is no file of the PR."""
    found: list[str] = []
    for text in texts:
        found += _CODE.findall(text)
        for token in _TOKEN.findall(_CODE.sub(" ", text)):
            token = token.strip(".,:;=-")
            if "_" in token or "/" in token or token.startswith("<|") or re.search(
                    r"[a-z][A-Z]", token):
                found.append(token)
    return _read("\n".join(found))


def _pull_identifiers(facts: PullFacts) -> str:
    quotes = [r.quote for r in facts.risks]
    structured = "\n".join((*facts.files, *facts.topics, *(r.path for r in facts.risks),
                            *(s for r in facts.risks for s in r.subjects)))
    return _read(structured) + "\n" + identifiers(facts.title, facts.body, *quotes)


@dataclass(frozen=True)
class PullEvidence:
    text: str
    idents: str
    figures: frozenset[str]
    refs: frozenset[int]
    names: tuple[str, ...]
    claims: PullClaims
    risks: tuple[PullClaims, ...] = ()
    """Each risk's own claims (its author, its severity), by index."""


def _recorded(facts: PullFacts) -> str:
    """The PR's recorded facts as the claim rules read them (JSON, casefolded)."""
    return msgspec.json.encode({"type": facts.type, "topics": facts.topics,
                                "labels": facts.labels, "security": facts.security,
                                "reviews": facts.reviews, "checks": facts.checks,
                                "measured": facts.measured}).decode().casefold()


def pull_evidence(facts: PullFacts, latest: int) -> PullEvidence:
    text = pull_text(facts)
    measured = {str(facts.additions + facts.deletions), str(facts.files_changed),
                str(len(facts.risks))}
    own = {int(n) for n in PULL_REF.findall(folded(text))}
    read = _read(text)
    figures = _figures(text) | measured
    people = {facts.author, *(r.author for r in facts.risks)} - {""}
    claims = PullClaims(text=read, recorded=_recorded(facts), units=unit_figures(folded(text)),
                        figures=figures, idents=_pull_identifiers(facts),
                        people=frozenset(p.casefold() for p in people),
                        severities=frozenset(r.severity for r in facts.risks))
    risks = tuple(replace(claims, people=frozenset(p.casefold() for p in {facts.author,
                                                                           r.author} - {""}),
                          severities=frozenset({r.severity})) for r in facts.risks)
    return PullEvidence(text=read, idents=claims.idents, figures=figures,
                        refs=frozenset(n for n in own if n <= latest),
                        names=tuple(folded(n) for n in (facts.title, *facts.topics) if n),
                        claims=claims, risks=risks)


@dataclass(frozen=True)
class Evidence:
    """The grounds of one digest's narration."""

    week: frozenset[int]
    pulls: Mapping[int, PullEvidence]
    week_idents: str = ""
    week_figures: frozenset[str] = frozenset()
    themes: Mapping[str, frozenset[int]] = field(default_factory=dict)
    theme_sizes: Mapping[str, int] = field(default_factory=dict)
    suggestions: Mapping[int, tuple[frozenset[int], str, frozenset[str]]] = field(
        default_factory=dict)
    names: tuple[str, ...] = ()
    counted: tuple[Counted, ...] = ()
    totals: frozenset[str] = frozenset()
    risk_counts: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()

    def _grounds(self, cited: Iterable[int], own: frozenset[str] = frozenset(),
                 **kw: object) -> Grounds:
        return Grounds(pulls={n: e.claims for n, e in self.pulls.items()},
                       counted=self.counted, totals=self.totals,
                       own_counts=self.totals | own, risk_counts=self.risk_counts,
                       people=self.people, **kw)  # type: ignore[arg-type]

    def _of(self, cited: Iterable[int]
            ) -> tuple[frozenset[str], str, str, tuple[str, ...]]:
        found = [self.pulls[n] for n in cited if n in self.pulls]
        return (frozenset().union(*(e.figures for e in found)),
                "\n".join(e.idents for e in found), "\n".join(e.text for e in found),
                tuple(n for e in found for n in e.names))

    def pull(self, number: int) -> Scope:
        """A PR's own narration: its summary names itself and the PRs its facts name."""
        own = self.pulls[number]
        people = self.people | own.claims.people
        return Scope(cited=frozenset({number}), may_cite=frozenset({number}),
                     may_name=frozenset({number}) | own.refs,
                     figures=own.figures, idents=own.idents, claims=own.text,
                     names=own.names,
                     grounds=Grounds(pulls={number: own.claims}, people=people,
                                     severities=own.claims.severities))

    def risk(self, number: int, index: int) -> Scope:
        """A risk line: its PR's facts, and its own concern's author and severity."""
        own = self.pulls[number]
        scope = self.pull(number)
        if not 0 <= index < len(own.risks):
            return scope
        claims = own.risks[index]
        return replace(scope, grounds=Grounds(
            pulls={number: claims}, people=self.people | own.claims.people,
            severities=claims.severities))

    def week_sentence(self, cited: Iterable[int]) -> Scope:
        """A sentence of the summary or trends: it names the PRs it cites, and the
        PRs their own facts name."""
        named = frozenset(cited)
        figures, idents, text, names = self._of(named)
        refs = frozenset().union(*(self.pulls[n].refs for n in named if n in self.pulls))
        return Scope(cited=named, may_cite=self.week, may_name=named | refs,
                     figures=self.week_figures | figures,
                     idents=f"{self.week_idents}\n{idents}",
                     claims=text, names=(*self.names, *names), grounds=self._grounds(named))

    def theme_sentence(self, key: str, cited: Iterable[int]) -> Scope:
        """A sentence of "changes": its theme's PRs only, and may state its size."""
        scope = self.week_sentence(cited)
        size = frozenset({str(self.theme_sizes[key])}) if key in self.theme_sizes else \
            frozenset()
        return replace(scope, may_cite=self.themes.get(key, frozenset()),
                       grounds=self._grounds(scope.cited, size))

    def suggestion(self, index: int, cited: Iterable[int]) -> Scope:
        """A suggestion: what the engine's suggestion `index` names, and no more."""
        refs, said, figures = self.suggestions.get(index, (frozenset(), "", frozenset()))
        scope = self.week_sentence(cited)
        return replace(scope, may_cite=refs, figures=figures | scope.figures,
                       idents=f"{said}\n{scope.idents}", claims=f"{said}\n{scope.claims}",
                       grounds=self._grounds(scope.cited, figures))


def week_figures(week: WeekFacts) -> frozenset[str]:
    """The week's own counts: totals, topic and type counts and shares, theme sizes,
    hot files, risks by severity, what is unknown, and the days of the period."""
    found: set[str] = {str(v) for v in (week.total, week.key, week.merged, week.closed,
                                        week.opened, len(week.themes), len(week.risks),
                                        len(week.suggestions), 7)}
    for item in (*week.topics, *week.types):
        found |= {str(item.count), *percent_forms(item.count / max(1, week.total))}
        if item.previous is not None:
            found.add(str(item.previous))
    found |= {str(t.count) for t in week.themes} | {str(h.pulls) for h in week.hot_files}
    for severity in {r.severity for r in week.risks}:
        found.add(str(sum(r.severity == severity for r in week.risks)))
    for note in week.unknown:
        found |= figures_in(note)
    for day in (week.first_day, week.last_day, week.week):
        found |= figures_in(day.replace("-W", " ").replace("-", " "))
    return frozenset(found)


def _week_identifiers(week: WeekFacts) -> str:
    """The week's own names (hot files, topics, themes, the engine's suggestions) and
    what reads as code in the shown PRs' titles and lines."""
    engine = [*(h.path for h in week.hot_files), *(t.title for t in week.themes),
              *(c.name for c in (*week.topics, *week.types)), *(s.text for s in week.suggestions)]
    return _read("\n".join(engine)) + "\n" + identifiers(
        *(text for p in week.pulls for text in (p.title, p.line)))


def evidence(week: Iterable[int], pulls: Mapping[int, PullFacts],
             facts: WeekFacts | None, latest: int) -> Evidence:
    """Grounds for a digest's sentences; `latest` the newest PR number the data knows."""
    by_pull = {n: pull_evidence(f, latest) for n, f in pulls.items()}
    if facts is None:
        return Evidence(week=frozenset(week), pulls=by_pull)
    suggestions = {s.index: (frozenset(s.pulls), _read(s.text), _figures(s.text))
                   for s in facts.suggestions}
    names = (facts.repository, *(t.title for t in facts.themes),
             *(c.name for c in (*facts.topics, *facts.types)),
             *(n for p in facts.pulls for n in (p.title, p.line) if n))
    people = frozenset().union(*(e.claims.people for e in by_pull.values()))
    return Evidence(week=frozenset(week), pulls=by_pull,
                    week_idents=_week_identifiers(facts), week_figures=week_figures(facts),
                    themes={t.key: frozenset(t.pulls) for t in facts.themes},
                    theme_sizes={t.key: t.count for t in facts.themes},
                    suggestions=suggestions, names=tuple(folded(n) for n in names),
                    counted=counted(facts), totals=frozenset(str(v) for v in (
                        facts.total, facts.key, facts.merged, facts.closed, facts.opened)),
                    risk_counts=_risk_counts(facts), people=people)


TYPE_NAMES = {
    # How sentences name a type of change besides its key: the lexicon's Chinese and
    # the English plural.
    kind: (label, *plural) for kind, label, plural in (
        (k, v, {"fix": ("fixes", "bug fixes"), "feat": ("features", "feature"),
                "perf": ("performance",), "refactor": ("refactors", "refactoring"),
                "docs": ("documentation",), "test": ("tests",), "chore": ("chores",
                                                                          "maintenance"),
                "revert": ("reverts",)}.get(k, ()))
        for k, v in lexicon().types.items())
}


def counted(week: WeekFacts) -> tuple[Counted, ...]:
    """The week's things a count or a share may be said of: topics and types (with
    their shares and last week's counts), themes by title and key, hot files by path and
    by file name."""
    out: list[Counted] = []
    for item in (*week.topics, *week.types):
        counts = {str(item.count)} | ({str(item.previous)} if item.previous is not None
                                      else set())
        names = (item.name, *TYPE_NAMES.get(item.name, ())) if item in week.types else \
            (item.name,)
        for name in names:
            out.append(Counted(name=_read(name), counts=frozenset(counts), shares=frozenset(
                percent_forms(item.count / max(1, week.total)))))
    for t in week.themes:
        for name in (t.title, t.key.split(":")[-1]):
            out.append(Counted(name=_read(name), counts=frozenset({str(t.count)})))
    for h in week.hot_files:
        for name in (h.path, h.path.rsplit("/", 1)[-1]):
            out.append(Counted(name=_read(name), counts=frozenset({str(h.pulls)})))
    return tuple(c for c in out if len(c.name) >= 2)


def _risk_counts(week: WeekFacts) -> frozenset[str]:
    """How many risks the week has: in all, of each severity, on each PR."""
    found = {str(len(week.risks))}
    for key in ({r.severity for r in week.risks} | {r.pull for r in week.risks}):
        found.add(str(sum(key in (r.severity, r.pull) for r in week.risks)))
    return frozenset(found)
