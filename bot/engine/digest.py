"""Build a week's `Digest` and one PR's `PullAnswer` from snapshot data.

Deterministic: the same snapshot, week, config and language give the same digest.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import msgspec

from bot.config import RepoConfig
from bot.engine.areas import Areas, folder_area, is_test_file, week_trunk
from bot.engine.assess import Assessment, assess, rank
from bot.engine.classify import classify
from bot.engine.headline import said_in
from bot.engine.people import people_of
from bot.engine.risks import find_risks, severity_rank
from bot.engine.suggest import Lead, settings_of, suggest
from bot.engine.summarize import figure_text, figures, summarize
from bot.engine.themes import Member, build_themes
from bot.engine.trends import (
    TYPE_NAME,
    area_counts,
    hot_files,
    topic_counts,
    type_counts,
    work_counts,
)
from bot.i18n import Translator, translator
from bot.models import (
    Counts,
    Digest,
    Lang,
    NameCount,
    PullAnswer,
    PullRequest,
    RepositoryCounts,
    Snapshot,
    Theme,
)
from bot.week import belongs_to_week, shift_week, week_period


def reviews_recorded(snapshot: Snapshot) -> bool:
    """Whether the data holds reviews at all: when no PR has one, they were not recorded,
    and "merged without approval" cannot be judged."""
    return any(pull.reviews for pull in snapshot.pulls)


def has_risk_data(snapshot: Snapshot) -> bool:
    """Whether the data holds anything a risk is found in: a review, a review thread or
    comment, or a check state (`bot.engine.risks`)."""
    return any(pull.reviews or pull.review_threads or pull.comments or pull.checks is not None
               for pull in snapshot.pulls)


def week_pulls(snapshot: Snapshot, week: str, tz: str) -> list[tuple[PullRequest, str]]:
    """The snapshot's PRs that belong to `week`, with how they count, by number."""
    period = week_period(week, tz)
    found = [(pull, belongs_to_week(pull, period)) for pull in snapshot.pulls]
    return sorted(((p, how) for p, how in found if how), key=lambda item: item[0].number)


def data_notes(pulls: list[PullRequest], recorded: bool, t: Translator) -> list[str]:
    """What the data leaves unknown about these PRs (reviews, checks, threads)."""
    notes: list[str] = []
    if not recorded:
        notes.append(t("Reviews were not recorded in this data, so approvals were not checked."))
    unknown_checks = sum(1 for p in pulls if p.state == "merged" and p.checks is None)
    one = len(pulls) == 1  # an answer about one PR speaks of "its", not "for 1 PR"
    if unknown_checks and one:
        notes.append(t("Its check state at merge is unknown."))
    elif unknown_checks:
        notes.append(t.n("The check state at merge is unknown for %(num)d PR.",
                         "The check state at merge is unknown for %(num)d PRs.",
                         unknown_checks))
    unknown_threads = sum(
        1 for p in pulls for th in p.review_threads or () if th.resolved is None
    )
    if unknown_threads and one:
        notes.append(t.n("Whether its review thread was resolved is not recorded.",
                         "Whether its %(num)d review threads were resolved is not recorded.",
                         unknown_threads))
    elif unknown_threads:
        notes.append(t.n("The resolution of %(num)d review thread is not recorded.",
                         "The resolution of %(num)d review threads is not recorded.",
                         unknown_threads))
    return notes


def build_digest(
    snapshot: Snapshot,
    week: str,
    *,
    repo_config: RepoConfig,
    lang: Lang,
    focus_topics: tuple[str, ...] = (),
    previous: Snapshot | None = None,
) -> Digest:
    """The week's digest in `lang`; `previous` (any snapshot holding the week before)
    adds last week's counts to the topic trends."""
    t = translator(lang)
    tz = repo_config.timezone
    recorded = reviews_recorded(snapshot)
    # Each PR of the week assessed once, then ranked: key PRs first, best first.
    ranked = rank([assess(pull, counted, repo_config, t, reviews_recorded=recorded,
                          focus_topics=focus_topics)
                   for pull, counted in week_pulls(snapshot, week, tz)], t)
    by_number = sorted(ranked, key=lambda a: a.number)  # the order of the lists
    key = [a for a in ranked if a.key]
    where = _Where.of(ranked, snapshot.repository, repo_config, t, focus_topics)
    areas, themes = where.areas, where.themes
    theme_of = {n: theme.title for theme in themes for n in (*theme.pulls, *theme.others)}
    pulls = [a.pull for a in by_number]
    # Last week placed and counted as this one (`_Where`), under this week's names, so a
    # move since last week says the same count as the busiest topics do.
    last = _last_week(previous, week, repo_config, t)
    before = None if last is None else _renamed(last.topics, areas)
    topics = where.topics if before is None else tuple(
        msgspec.structs.replace(c, previous=before.get(c.name, 0)) for c in where.topics)
    counted = where.counted(previous=None if last is None else _renamed(last.counted(), areas))
    types = type_counts(((a.number, a.cls.type) for a in by_number), len(by_number), t)
    hot = hot_files(pulls, routine=frozenset(where.routine))
    risks = tuple(sorted((r for a in by_number for r in a.risks), key=severity_rank))
    counts = _counts(by_number, key=len(key))
    return Digest(
        repository=snapshot.repository,
        week=week,
        period=week_period(week, tz),
        counts=counts,
        topics=topics,
        types=types,
        hot_files=hot,
        themes=themes,
        risks=risks,
        key_pulls=tuple(a.key_pull() for a in key),
        suggestions=suggest(risks, counted, types, hot, _breaking(by_number), t,
                            leads=tuple(_lead(a, areas) for a in key)),
        lang=lang,
        notes=tuple(data_notes(pulls, recorded, t)),
        data_as_of=snapshot.fetched_at,
        # A week of no key PR names its few PRs by their lines instead.
        pulls=tuple(a.entry(theme_of[a.number], None if key else lang) for a in by_number),
        areas=counted,
        people=people_of(pulls, reviews_recorded=recorded),
        risk_data=has_risk_data(snapshot),
        repositories=(RepositoryCounts(name=snapshot.repository, counts=counts),),
    )


@dataclass(frozen=True)
class _Where:
    """Where a week's PRs were: their areas, themes and topics, and which are routine
    (dependency updates, branch syncs)."""

    assessed: list[Assessment]
    areas: Areas
    themes: tuple[Theme, ...]
    topics: tuple[NameCount, ...]
    routine: set[int]
    focus: tuple[str, ...]

    @classmethod
    def of(cls, assessed: list[Assessment], repository: str, repo_config: RepoConfig,
           t: Translator, focus: tuple[str, ...] = ()) -> _Where:
        """`assessed` placed: the `focus` topics first among the topics."""
        package = repository.rsplit("/", 1)[-1]
        trunk = week_trunk([[f.path for f in a.pull.files] for a in assessed], package)
        members = [_member(a, package, trunk) for a in assessed]
        areas = week_areas(repo_config, t, members)
        by_number = sorted(assessed, key=lambda a: a.number)
        return cls(assessed=by_number, areas=areas,
                   themes=build_themes(members, areas, t, focus_topics=focus),
                   topics=topic_counts(((a.number, a.cls.topics) for a in by_number),
                                       len(by_number), areas, focus=focus),
                   routine={a.number for a in by_number if a.cls.bump or a.cls.sync},
                   focus=focus)

    def counted(self, previous: dict[str, int] | None = None) -> tuple[NameCount, ...]:
        """The areas as the trends count them (`area_counts`): a topic's PRs with its
        theme's, without the routine PRs (ten lock-file bumps do not make "build" the
        week's focus; questions about a topic still find them in the topics); the
        focus topics first; `previous`, last week's counts by this week's names."""
        total = len(self.assessed)
        work = work_counts(self.topics, self.routine, total) if self.routine else self.topics
        return area_counts(work, self.themes, total, previous=previous,
                           first=(self.areas.canonical(a) for a in self.areas.keys(self.focus)))


def _member(a: Assessment, package: str, trunk: frozenset[str]) -> Member:
    paths = tuple(f.path for f in a.pull.files)
    return Member(number=a.number, cls=a.cls, paths=paths, key=a.key,
                  folder=folder_area(paths, package, trunk))


def week_areas(repo_config: RepoConfig, t: Translator, members: list[Member]) -> Areas:
    """The week's areas, with the spellings its PRs use (they name the areas)."""
    areas = Areas(repo_config, t)
    for m in members:
        areas.observe((*m.cls.topics, m.folder))
    return areas


def _last_week(previous: Snapshot | None, week: str, repo_config: RepoConfig,
               t: Translator) -> _Where | None:
    """The week before `week`, placed as this one is; None when `previous` holds no PR
    of it."""
    if previous is None:
        return None
    recorded = reviews_recorded(previous)
    assessed = [assess(pull, counted, repo_config, t, reviews_recorded=recorded)
                for pull, counted in week_pulls(previous, shift_week(week, -1),
                                                repo_config.timezone)]
    return _Where.of(assessed, previous.repository, repo_config, t) if assessed else None


def _renamed(counts: Iterable[NameCount], areas: Areas) -> dict[str, int]:
    """Last week's counts under this week's names (`areas`): the PRs of every spelling
    that is one name now, each once."""
    pulls: dict[str, set[int]] = {}
    for c in counts:
        pulls.setdefault(areas.canonical(areas.key(c.name)), set()).update(c.pulls)
    return {name: len(numbers) for name, numbers in pulls.items()}


def _counts(assessed: list[Assessment], *, key: int) -> Counts:
    how = [a.counted for a in assessed]
    return Counts(total=len(assessed), key=key, merged=how.count("merged"),
                  closed=how.count("closed"), opened=how.count("opened"))


def _breaking(assessed: list[Assessment]) -> list[int]:
    """The merged PRs that say they break something."""
    return [a.number for a in assessed if a.cls.breaking and a.pull.state == "merged"]


def _lead(a: Assessment, areas: Areas) -> Lead:
    """What a suggestion may follow up about a key PR: the settings a feature adds; its
    topics named as the digest's topics are; whether it changes a test."""
    return Lead(number=a.number, type=a.cls.type, settings=settings_of(a.pull, a.cls),
                topics=tuple(areas.canonical(k) for k in areas.keys(a.cls.topics)),
                tested=any(is_test_file(f.path) for f in a.pull.files))


def answer_pull(
    pull: PullRequest,
    *,
    repository: str,
    repo_config: RepoConfig,
    lang: Lang,
    reviews_recorded: bool = True,
    risk_data: bool = True,
) -> PullAnswer:
    """Summary and risks of one PR, from the same rules as the digest; `risk_data`:
    whether the data it comes from holds anything a risk is found in."""
    t = translator(lang)
    cls = classify(pull, repo_config)
    risks = find_risks(pull, t, reviews_recorded=reviews_recorded)
    notes = data_notes([pull], reviews_recorded, t)
    summary, described = summarize(pull, cls, t)
    if pull.state != "merged":
        notes.insert(0, t("This PR is not merged yet (%(state)s); its review may still be "
                          "in progress.", state=pull.state))
    return PullAnswer(
        repository=repository,
        number=pull.number,
        title=pull.title,
        url=pull.url,
        state=pull.state,
        summary=summary,
        described=described,
        risk_data=risk_data,
        risks=tuple(risks),
        topics=cls.topics,
        type=cls.type,
        type_name=t(TYPE_NAME[cls.type]) if cls.type in TYPE_NAME else "",
        notes=tuple(notes),
        headline=said_in(cls, lang, repository),
        files=len(pull.files) or pull.changed_files or 0,
        lines=pull.lines_changed,
        figures=tuple(figure_text(f, lang) for f in figures(pull.body)),
    )
