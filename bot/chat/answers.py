"""The questions about a week answered from its digest's own data: the week's risks, what
changed in an area, who did the work, the week against the one before, and the PRs
waiting for review (from GitHub's review queue). Nothing here invents: every PR, count
and name comes from the digest (or the queue) it is given.

Each function takes what it answers from and gives a `WeekAnswer`; the handler fetches
the digests and turns failures into error replies.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from bot.config import Config
from bot.engine.areas import AREA_OF_TYPE, BUILTIN, Areas, fold
from bot.i18n import translator
from bot.models import AnswerPull, Digest, NameCount, PullEntry, Risk, WeekAnswer
from bot.source import ReviewQueue

SHOWN = 10
"""PRs one answer lists at most (it says how many there are in all)."""
_SEVERITY = {"high": 0, "medium": 1, "low": 2}


def _parts(digest: Digest) -> tuple[Digest, ...]:
    """Each repository's own digest (a digest of one repository is its own part)."""
    return digest.parts or (digest,)


def _scope(digest: Digest, part: Digest) -> str:
    """The repository a part's PRs are written with (only where there are several)."""
    return part.repository if digest.parts else ""


def _entry_pull(entry: PullEntry, repository: str, **extra: object) -> AnswerPull:
    return AnswerPull(number=entry.number, title=entry.short_title or entry.title,
                      url=entry.url, repository=repository, headline=entry.headline,
                      **extra)  # type: ignore[arg-type]


def week_risks(digest: Digest) -> WeekAnswer:
    """The week's PRs with risks, the most severe first, each with its worst risk."""
    found: list[tuple[int, int, AnswerPull]] = []
    for part in _parts(digest):
        entries = {entry.number: entry for entry in part.pulls}
        by_pull: dict[int, list[Risk]] = {}
        for risk in part.risks:
            by_pull.setdefault(risk.pull, []).append(risk)
        for order, (number, risks) in enumerate(by_pull.items()):
            worst = min(risks, key=lambda r: _SEVERITY.get(r.severity, 3))
            entry = entries.get(number)
            title = entry.short_title or entry.title if entry else ""
            found.append((_SEVERITY.get(worst.severity, 3), order, AnswerPull(
                number=number, title=title, url=entry.url if entry else worst.evidence_url,
                repository=_scope(digest, part), headline=entry.headline if entry else "",
                note=worst.summary, severity=worst.severity, risks=len(risks))))
    found.sort(key=lambda item: (item[0], item[1]))
    pulls = tuple(pull for _, _, pull in found)
    return WeekAnswer(question="risks", repository=digest.repository, week=digest.week,
                      pulls=pulls[:SHOWN], total=len(pulls), counts=digest.counts,
                      report_url=digest.report_url, as_of=digest.data_as_of,
                      risk_data=digest.risk_data)


# How a reader asks for the theme of other changes (其他改动 without the 改动 the
# question's grammar reads as "what changed").
_OTHER_NAMES = frozenset({"other", "others", "otherchange", "其他", "其它", "其他改动"})


def area_changes(digest: Digest, area: str, config: Config) -> WeekAnswer:
    """The week's PRs on `area` (a topic, a module, an alias of one: `ckpt` is
    `checkpoint`), as the digest counts them; none when the week has none there.
    `topics` holds the area's count and the week before's, as the digest has them."""
    pulls: list[AnswerPull] = []
    counted: list[NameCount] = []
    named = ""
    for part in _parts(digest):
        areas = Areas(config.repo(part.repository), translator(digest.lang))
        wanted = areas.key(area)
        entries = {entry.number: entry for entry in part.pulls}
        numbers: list[int] = []
        # The digest's areas (a topic's PRs with its theme's, counted as its trends and
        # "Compared with last week" count them), then the topics (their routine PRs).
        matched = [topic for topic in (*part.areas, *part.topics)
                   if areas.key(topic.name) == wanted or fold(topic.label) == fold(area)]
        for topic in matched:
            numbers += [n for n in topic.pulls if n not in numbers]
            named = named or topic.label or topic.name
        for theme in part.themes:
            # An area's theme, or a theme of its own kind named so (the security fixes),
            # or any theme asked for by the name the digest gave it (依赖升级).
            if (theme.kind == "area" and theme.area and areas.key(theme.area) == wanted) \
                    or theme.kind == wanted or fold(theme.title) == fold(area) \
                    or (theme.kind == "other" and fold(area) in _OTHER_NAMES):
                numbers += [n for n in (*theme.pulls, *theme.others) if n not in numbers]
                named = named or theme.title
        # The PRs whose kind is work in the area (`docs:`, `test(...)`), wherever they sit.
        numbers += [e.number for e in part.pulls
                    if AREA_OF_TYPE.get(e.type) == wanted and e.number not in numbers]
        if not named and wanted in BUILTIN:
            named = areas.name(wanted)  # "Tests", not the "tests" asked
        pulls += [_entry_pull(entries[n], _scope(digest, part)) for n in numbers
                  if n in entries]
        # The area's count and its week before, where the answer holds just its PRs (not
        # its routine PRs or the PRs of its kind elsewhere, which last week's count left
        # out).
        if matched and set(numbers) == set(matched[0].pulls):
            counted.append(matched[0])
    return WeekAnswer(question="changes", repository=digest.repository, week=digest.week,
                      area=named or area, pulls=tuple(pulls[:SHOWN]), total=len(pulls),
                      topics=tuple(counted), report_url=digest.report_url,
                      as_of=digest.data_as_of)


def week_topics(digest: Digest) -> tuple[str, ...]:
    """The week's topics as the digest counts and names them (its areas: "CI", 文档),
    busiest first: what to ask about."""
    seen: dict[str, int] = {}
    for part in _parts(digest):
        for topic in part.areas or part.topics:
            name = topic.label or topic.name
            seen[name] = seen.get(name, 0) + topic.count
    return tuple(sorted(seen, key=lambda name: (-seen[name], name)))


def week_people(digest: Digest, who: str) -> WeekAnswer:
    """Who did the week's work, as the digest's People line counts it (`who`: the
    question asked of authors, "merged", or of reviewers, "reviewed")."""
    return WeekAnswer(question="people", repository=digest.repository, week=digest.week,
                      area=who, people=digest.people, counts=digest.counts,
                      report_url=digest.report_url, as_of=digest.data_as_of)


def compare_weeks(digest: Digest, before: Digest) -> WeekAnswer:
    """The week against the one before: both weeks' counts, and the areas whose counts
    changed most (each with the week before's count), as the digest's trends count
    them: the week before's count its digest holds where it has one."""
    now = _topic_counts([digest])
    # The digest's own week-before counts, and the areas of that week it has none of
    # now (they fell to zero), from the week before's digest.
    then = {**_topic_counts([before]), **_previous_counts(digest)}
    labels = {name: label for name, (_, label) in {**then, **now}.items()}
    names = set(now) | set(then)
    moved = sorted(names, key=lambda n: (-abs(now.get(n, (0, ""))[0] - then.get(n, (0, ""))[0]),
                                         -now.get(n, (0, ""))[0], n))
    topics = tuple(NameCount(name=name, label=labels[name], count=now.get(name, (0, ""))[0],
                             previous=then.get(name, (0, ""))[0], share=0.0)
                   for name in moved[:5]
                   if now.get(name, (0, ""))[0] != then.get(name, (0, ""))[0])
    return WeekAnswer(question="compare", repository=digest.repository, week=digest.week,
                      counts=digest.counts, previous=before.counts, topics=topics,
                      report_url=digest.report_url, as_of=digest.data_as_of)


def _topic_counts(digests: Iterable[Digest]) -> dict[str, tuple[int, str]]:
    """Each area's count and label, over every part (the digest's areas: its topics
    where it has none)."""
    counts: dict[str, tuple[int, str]] = {}
    for digest in digests:
        for part in _parts(digest):
            for topic in part.areas or part.topics:
                count, _ = counts.get(topic.name, (0, ""))
                counts[topic.name] = (count + topic.count, topic.label or topic.name)
    return counts


def _previous_counts(digest: Digest) -> dict[str, tuple[int, str]]:
    """The week before's count of each area, as the digest's "Compared with last week"
    has it (under this week's names); {} where any part does not know it."""
    counts: dict[str, tuple[int, str]] = {}
    for part in _parts(digest):
        if not part.areas or any(a.previous is None for a in part.areas):
            return {}
        for area in part.areas:
            count, _ = counts.get(area.name, (0, ""))
            counts[area.name] = (count + (area.previous or 0), area.label or area.name)
    return counts


def review_queue(queue: ReviewQueue, repositories: tuple[str, ...], now: datetime
                 ) -> WeekAnswer:
    """The PRs waiting for review, oldest first, each with how many days it has waited
    (as of when GitHub answered)."""
    several = len(repositories) > 1
    pulls = tuple(AnswerPull(
        number=pull.number, title=pull.title, url=pull.url,
        repository=pull.repository if several else "", author=pull.author,
        waiting_days=max((queue.fetched_at - pull.created_at).days, 0)
        if pull.created_at else None,
    ) for pull in queue.pulls[:SHOWN])
    return WeekAnswer(question="pending", repository=", ".join(repositories), pulls=pulls,
                      total=queue.total, as_of=queue.fetched_at or now)
