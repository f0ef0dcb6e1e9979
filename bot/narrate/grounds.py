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


def pull_evidence(facts: PullFacts, latest: int) -> PullEvidence:
    text = pull_text(facts)
    measured = {str(facts.additions + facts.deletions), str(facts.files_changed),
                str(len(facts.risks))}
    own = {int(n) for n in PULL_REF.findall(folded(text))}
    return PullEvidence(text=_read(text), idents=_pull_identifiers(facts),
                        figures=_figures(text) | measured,
                        refs=frozenset(n for n in own if n <= latest),
                        names=tuple(folded(n) for n in (facts.title, *facts.topics) if n))


@dataclass(frozen=True)
class Evidence:
    """The grounds of one digest's narration."""

    week: frozenset[int]
    pulls: Mapping[int, PullEvidence]
    week_idents: str = ""
    week_figures: frozenset[str] = frozenset()
    themes: Mapping[str, frozenset[int]] = field(default_factory=dict)
    suggestions: Mapping[int, tuple[frozenset[int], str, frozenset[str]]] = field(
        default_factory=dict)
    names: tuple[str, ...] = ()

    def _of(self, cited: Iterable[int]
            ) -> tuple[frozenset[str], str, str, tuple[str, ...]]:
        found = [self.pulls[n] for n in cited if n in self.pulls]
        return (frozenset().union(*(e.figures for e in found)),
                "\n".join(e.idents for e in found), "\n".join(e.text for e in found),
                tuple(n for e in found for n in e.names))

    def pull(self, number: int) -> Scope:
        """A PR's own narration: its title, summary and risk lines."""
        own = self.pulls[number]
        return Scope(cited=frozenset({number}), may_cite=frozenset({number}),
                     may_name=frozenset({number}) | self.week | own.refs,
                     figures=own.figures, idents=own.idents, claims=own.text,
                     names=own.names)

    def week_sentence(self, cited: Iterable[int]) -> Scope:
        """A sentence of the summary or trends: it names the PRs it cites, and the
        PRs their own facts name."""
        named = frozenset(cited)
        figures, idents, text, names = self._of(named)
        refs = frozenset().union(*(self.pulls[n].refs for n in named if n in self.pulls))
        return Scope(cited=named, may_cite=self.week, may_name=named | refs,
                     figures=self.week_figures | figures,
                     idents=f"{self.week_idents}\n{idents}",
                     claims=text, names=(*self.names, *names))

    def theme_sentence(self, key: str, cited: Iterable[int]) -> Scope:
        """A sentence of "changes": its theme's PRs only."""
        return replace(self.week_sentence(cited), may_cite=self.themes.get(key, frozenset()))

    def suggestion(self, index: int, cited: Iterable[int]) -> Scope:
        """A suggestion: what the engine's suggestion `index` names, and no more."""
        refs, said, figures = self.suggestions.get(index, (frozenset(), "", frozenset()))
        scope = self.week_sentence(cited)
        return replace(scope, may_cite=refs, figures=figures | scope.figures,
                       idents=f"{said}\n{scope.idents}", claims=f"{said}\n{scope.claims}")


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
    return Evidence(week=frozenset(week), pulls=by_pull,
                    week_idents=_week_identifiers(facts), week_figures=week_figures(facts),
                    themes={t.key: frozenset(t.pulls) for t in facts.themes},
                    suggestions=suggestions, names=tuple(folded(n) for n in names))
