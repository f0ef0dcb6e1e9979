"""One PR of the week as the digest judges it: a record of its assessment.

Each PR is read once here (its class, risks, figures and score; for a key PR its summary
and line), and every later step of the digest (themes, trends, suggestions, the lists)
reads these records instead of looking each fact up by PR number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.config import RepoConfig
from bot.engine.classify import Classification, classify
from bot.engine.conventions import release_name
from bot.engine.headline import said_in
from bot.engine.risks import find_risks
from bot.engine.score import Score, key_facts, score_pull
from bot.engine.suggest import settings_of
from bot.engine.summarize import plain_figures, summary_and_line, title_line
from bot.engine.text import clean_body, sentence_case
from bot.i18n import Translator
from bot.models import KeyPull, Lang, PullEntry, PullRequest, Risk

# Key PRs a reader can take in: the best of the week, at most this many.
KEY_LIMIT = 30
# A week of fewer PRs than this is small: at most two thirds of its PRs are key (never
# fewer than `SMALL_WEEK_KEY`), so "key" still picks some out (12 of 12 picked none).
SMALL_WEEK = 15
SMALL_WEEK_KEY = 3


@dataclass(frozen=True, slots=True)
class Assessment:
    """A PR with what the digest found about it. `summary`, `line` and `facts` are set
    for key PRs only (what the digest shows of them); `counted` is how the PR belongs to
    the week (merged, closed or opened); `headline` its title said in Chinese in a zh
    digest (`bot.engine.headline`)."""

    pull: PullRequest
    counted: str
    cls: Classification
    risks: tuple[Risk, ...]
    figures: tuple[str, ...]
    score: Score
    plain_body: str
    headline: str = ""
    key: bool = False
    summary: str = ""
    line: str = ""
    facts: tuple[str, ...] = ()

    @property
    def number(self) -> int:
        return self.pull.number

    @property
    def short_title(self) -> str:
        return sentence_case(self.cls.short_title)

    def key_pull(self) -> KeyPull:
        """The key PR as the digest lists it."""
        p = self.pull
        return KeyPull(number=p.number, title=p.title, summary=self.summary, url=p.url,
                       short_title=self.short_title, type=self.cls.type,
                       topics=self.cls.topics, reasons=self.score.reasons,
                       figures=self.figures, score=self.score.value, line=self.line,
                       headline=self.headline, facts=self.facts)

    def entry(self, theme: str, named_in: Lang | None = None) -> PullEntry:
        """The PR in the list of every PR of the week, under `theme`; `named_in` the
        language of a digest that names it by its line though it is not key (a week of
        no key PR lists its few PRs)."""
        p = self.pull
        headline = self.headline if self.key or self.cls.security else (
            said_in(self.cls, named_in, _repository(p)) if named_in else "")
        return PullEntry(number=p.number, title=p.title, type=self.cls.type,
                         topics=self.cls.topics, theme=theme, key=self.key, url=p.url,
                         short_title=self.short_title,
                         line=self.line if self.key else title_line(self.cls),
                         security=self.cls.security, sync=self.cls.sync, headline=headline,
                         release=release_name(self.short_title, p.body)
                         if self.cls.release and p.state == "merged" else "")


def assess(
    pull: PullRequest,
    counted: str,
    repo_config: RepoConfig,
    t: Translator,
    *,
    reviews_recorded: bool,
    focus_topics: tuple[str, ...] = (),
) -> Assessment:
    """Class, risks (of a merged PR), figures and score of one PR."""
    cls = classify(pull, repo_config)
    risks = find_risks(pull, t, reviews_recorded=reviews_recorded) if pull.state == "merged" \
        else []
    # The body made plain once: the figures and the summary are both read from it.
    flat = clean_body(pull.body, pull.title) if pull.body else ""
    figures = plain_figures(flat)
    score = score_pull(pull, cls, risks, figures, t, focus_topics=focus_topics, body=flat)
    return Assessment(pull=pull, counted=counted, cls=cls, risks=tuple(risks),
                      figures=figures, score=score, plain_body=flat,
                      # Said for the PRs the digest names by it: key ones and security fixes.
                      headline=said_in(cls, t.lang, _repository(pull)) if cls.security else "")


def _repository(pull: PullRequest) -> str:
    """The repository a PR is in, from its address (`owner/name`), or ""."""
    parts = pull.url.split("/")
    return f"{parts[3]}/{parts[4]}" if len(parts) > 4 and "/pull/" in pull.url else ""


def rank(assessed: Sequence[Assessment], t: Translator) -> list[Assessment]:
    """The week's PRs best first, the key ones (at most KEY_LIMIT) ahead and summarised;
    every other PR is listed by its title, so it gets no summary."""
    by_score = sorted(assessed, key=lambda a: (-a.score.value, a.number))
    chosen = {a.number for a in [a for a in by_score if a.score.key][:key_limit(len(assessed))]}
    key = [_summarised(a, t) for a in by_score if a.number in chosen]
    return key + [a for a in by_score if a.number not in chosen]


def key_limit(week_size: int) -> int:
    """How many of a week's PRs may be key: `KEY_LIMIT`, and in a small week at most
    two thirds of them (never fewer than `SMALL_WEEK_KEY`)."""
    if week_size >= SMALL_WEEK:
        return KEY_LIMIT
    return max(SMALL_WEEK_KEY, 2 * week_size // 3)


def _summarised(a: Assessment, t: Translator) -> Assessment:
    summary, line = summary_and_line(a.pull, a.cls, t, a.plain_body)
    headline = a.headline or said_in(a.cls, t.lang, _repository(a.pull))
    facts = key_facts(a.pull, a.cls, list(a.risks), a.figures, settings_of(a.pull, a.cls), t,
                      headline=headline, body=a.plain_body)
    return replace(a, key=True, summary=summary, line=line, headline=headline, facts=facts)
