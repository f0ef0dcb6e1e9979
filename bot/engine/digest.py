"""Build a week's `Digest` and one PR's `PullAnswer` from snapshot data.

Deterministic: the same snapshot, week, config and language give the same digest.
"""

from __future__ import annotations

from bot.config import RepoConfig
from bot.engine.classify import Classification, classify
from bot.engine.headline import said_in
from bot.engine.people import people_of
from bot.engine.risks import find_risks, severity_rank
from bot.engine.score import Score, key_facts, score_pull
from bot.engine.suggest import Lead, settings_of, suggest
from bot.engine.summarize import (
    figure_text,
    figures,
    plain_figures,
    summarize,
    summary_and_line,
    title_line,
)
from bot.engine.text import plain, sentence_case
from bot.engine.themes import Member, build_themes
from bot.engine.trends import count_names, hot_files
from bot.i18n import Translator, translator
from bot.models import (
    Counts,
    Digest,
    KeyPull,
    Lang,
    PullAnswer,
    PullEntry,
    PullRequest,
    RepositoryCounts,
    Risk,
    Snapshot,
)
from bot.week import belongs_to_week, shift_week, week_period

# Key PRs a reader can take in: the best of the week, at most this many.
KEY_LIMIT = 30


def reviews_recorded(snapshot: Snapshot) -> bool:
    """Whether the data holds reviews at all: when no PR has one, they were not recorded,
    and "merged without approval" cannot be judged."""
    return any(pull.reviews for pull in snapshot.pulls)


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
    if unknown_checks:
        notes.append(t.n("The check state at merge is unknown for %(num)d PR.",
                         "The check state at merge is unknown for %(num)d PRs.",
                         unknown_checks))
    unknown_threads = sum(
        1 for p in pulls for th in p.review_threads or () if th.resolved is None
    )
    if unknown_threads:
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
    week_members = week_pulls(snapshot, week, tz)
    pulls = [p for p, _ in week_members]
    recorded = reviews_recorded(snapshot)
    classes: dict[int, Classification] = {p.number: classify(p, repo_config) for p in pulls}
    risks_by_pull: dict[int, list[Risk]] = {
        p.number: find_risks(p, t, reviews_recorded=recorded) if p.state == "merged" else []
        for p in pulls
    }
    scores: dict[int, Score] = {}
    figures_by_pull: dict[int, tuple[str, ...]] = {}
    # Each body made plain once: the figures and the summary are both read from it.
    flat = {p.number: plain(p.body) if p.body else "" for p in pulls}
    for pull in pulls:
        figures_by_pull[pull.number] = plain_figures(flat[pull.number])
        scores[pull.number] = score_pull(
            pull, classes[pull.number], risks_by_pull[pull.number],
            figures_by_pull[pull.number], t, focus_topics=focus_topics,
        )
    by_number = {p.number: p for p in pulls}
    by_score = sorted(pulls, key=lambda p: (-scores[p.number].value, p.number))
    ranked = [p for p in by_score if scores[p.number].key][:KEY_LIMIT]
    key_numbers = {p.number for p in ranked}
    # Only key PRs are summarised (their summary and line are what the digest shows);
    # every other PR is listed by its title, so its line is the title's text.
    said = {p.number: summary_and_line(p, classes[p.number], t, flat[p.number]) for p in ranked}
    key_pulls = tuple(
        KeyPull(
            number=p.number,
            title=p.title,
            summary=said[p.number][0],
            url=p.url,
            short_title=sentence_case(classes[p.number].short_title),
            type=classes[p.number].type,
            topics=classes[p.number].topics,
            reasons=scores[p.number].reasons,
            figures=figures_by_pull[p.number],
            score=scores[p.number].value,
            line=said[p.number][1],
            headline=said_in(classes[p.number], lang),
            facts=key_facts(p, classes[p.number], risks_by_pull[p.number],
                            figures_by_pull[p.number], settings_of(p, classes[p.number]), t,
                            headline=said_in(classes[p.number], lang)),
        )
        for p in ranked
    )
    members = [Member(number=p.number, cls=classes[p.number],
                      paths=tuple(f.path for f in p.files), key=p.number in key_numbers)
               for p in ranked + [p for p in by_score if p.number not in key_numbers]]
    themes = build_themes(members, repo_config, t, focus_topics=focus_topics,
                          package=snapshot.repository.rsplit("/", 1)[-1])
    theme_of = {n: theme.title for theme in themes for n in (*theme.pulls, *theme.others)}
    total = len(pulls)
    entries = tuple(
        PullEntry(number=p.number, title=p.title, type=classes[p.number].type,
                  topics=classes[p.number].topics, theme=theme_of[p.number],
                  key=p.number in key_numbers, url=p.url,
                  short_title=sentence_case(classes[p.number].short_title),
                  line=said[p.number][1] if p.number in said else title_line(classes[p.number]),
                  security=classes[p.number].security,
                  headline=said_in(classes[p.number], lang)
                  if p.number in key_numbers or classes[p.number].security else "")
        for p in pulls
    )
    previous_topics: dict[str, int] | None = None
    if previous is not None:
        before = [p for p, _ in week_pulls(previous, shift_week(week, -1), tz)]
        if before:
            previous_topics = {
                c.name: c.count
                for c in count_names(((p.number, classify(p, repo_config).topics)
                                      for p in before), len(before))
            }
    topics = count_names(((p.number, classes[p.number].topics) for p in pulls), total,
                         previous_topics)
    if focus_topics:
        topics = tuple(sorted(topics, key=lambda c: c.name not in focus_topics))
    types = count_names(((p.number, (classes[p.number].type,)) for p in pulls), total)
    hot = hot_files(pulls)
    risks = tuple(sorted((r for rs in risks_by_pull.values() for r in rs), key=severity_rank))
    breaking = [p.number for p in pulls if classes[p.number].breaking and p.state == "merged"]
    how = [h for _, h in week_members]
    counts = Counts(total=total, key=len(key_pulls), merged=how.count("merged"),
                    closed=how.count("closed"), opened=how.count("opened"))
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
        key_pulls=key_pulls,
        suggestions=suggest(risks, topics, types, hot, breaking, t, leads=tuple(
            Lead(number=k.number, type=k.type, topics=k.topics,
                 settings=settings_of(by_number[k.number], classes[k.number]))
            for k in key_pulls)),
        lang=lang,
        notes=tuple(data_notes(pulls, recorded, t)),
        data_as_of=snapshot.fetched_at,
        pulls=entries,
        people=people_of(pulls, reviews_recorded=recorded),
        repositories=(RepositoryCounts(name=snapshot.repository, counts=counts),),
    )


def answer_pull(
    pull: PullRequest,
    *,
    repository: str,
    repo_config: RepoConfig,
    lang: Lang,
    reviews_recorded: bool = True,
) -> PullAnswer:
    """Summary and risks of one PR, from the same rules as the digest."""
    t = translator(lang)
    cls = classify(pull, repo_config)
    risks = find_risks(pull, t, reviews_recorded=reviews_recorded)
    notes = data_notes([pull], reviews_recorded, t)
    if pull.state != "merged":
        notes.insert(0, t("This PR is not merged yet (%(state)s); its review may still be "
                          "in progress.", state=pull.state))
    return PullAnswer(
        repository=repository,
        number=pull.number,
        title=pull.title,
        url=pull.url,
        state=pull.state,
        summary=summarize(pull, cls, t),
        risks=tuple(risks),
        topics=cls.topics,
        type=cls.type,
        notes=tuple(notes),
        headline=said_in(cls, lang),
        files=len(pull.files) or pull.changed_files or 0,
        lines=pull.lines_changed,
        figures=tuple(figure_text(f, lang) for f in figures(pull.body)),
    )
