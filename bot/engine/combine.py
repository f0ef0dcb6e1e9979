"""One digest of several repositories' weeks: counts, topics and types summed over
them, each repository's own digest kept whole for its sections.

Each repository's digest is built on its own (`build_digest`), so its themes, risks and
key PRs are exactly what a digest of that repository alone would show; this module only
adds them up. Each part is drawn under its repository's name, so its `#12` needs no
more; PR numbers repeat across repositories, so wherever the combined digest names a PR
in its own text (its list of suggestions) it is written `owner/name#12`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, zip_longest

from bot.engine.digest import data_notes
from bot.i18n import translator
from bot.models import Counts, Digest, Lang, NameCount, PullRequest, RepositoryCounts

# `#12`, `PR#12` or `PR #12` as the engine or the narrator writes a PR reference (Chinese
# text may touch it), not inside a word, a path or `org/a#12`.
_BARE_REF = re.compile(r"(?<![A-Za-z0-9_/#])(?:PR ?)?#(\d+)(?!\d)")


def repository_counts(digest: Digest) -> RepositoryCounts:
    return RepositoryCounts(name=digest.repository, counts=digest.counts)


def qualify(text: str, repository: str) -> str:
    """`text` with each bare `#12` (or `PR#12`, `PR #12`) written `repository#12`."""
    return _BARE_REF.sub(lambda match: f"{repository}#{match.group(1)}", text)


def _sum_counts(parts: Sequence[Digest]) -> Counts:
    return Counts(total=sum(p.counts.total for p in parts),
                  key=sum(p.counts.key for p in parts),
                  merged=sum(p.counts.merged for p in parts),
                  closed=sum(p.counts.closed for p in parts),
                  opened=sum(p.counts.opened for p in parts))


def merge_names(groups: Iterable[tuple[NameCount, ...]], total: int,
                focus: tuple[str, ...] = ()) -> tuple[NameCount, ...]:
    """Counts of the same name added up, most frequent first, ties by name, `focus`
    names first. Last week's count is summed over the repositories, and known only when
    every repository's last week is (a sum over some of them would read as growth); PR
    numbers are left out, since they repeat across repositories."""
    groups = [tuple(group) for group in groups]
    every_week_known = all(any(item.previous is not None for item in group)
                           for group in groups if group)
    counts: dict[str, int] = {}
    previous: dict[str, int | None] = {}
    for group in groups:
        for item in group:
            counts[item.name] = counts.get(item.name, 0) + item.count
            if item.previous is not None:
                previous[item.name] = (previous.get(item.name) or 0) + item.previous
            else:
                previous.setdefault(item.name, None)
    ranked = sorted(counts, key=lambda name: (name not in focus if focus else False,
                                              -counts[name], name))
    return tuple(NameCount(name=name, count=counts[name],
                           share=round(counts[name] / total, 4) if total else 0.0,
                           previous=previous[name] if every_week_known else None)
                 for name in ranked)


@dataclass(frozen=True)
class PartFacts:
    """What the notes of a combined digest are made of, for one repository: its own
    notes (a stale copy, PRs left out), its week's PRs, whether reviews were recorded."""

    repository: str
    own_notes: tuple[str, ...]
    pulls: tuple[PullRequest, ...]
    reviews_recorded: bool


def combined_notes(facts: Sequence[PartFacts], lang: Lang) -> tuple[str, ...]:
    """The notes of a combined digest: each repository's own notes under its name, then
    what the data leaves unknown counted over every repository's PRs once (the review
    note names the repositories without reviews when only some have them)."""
    t = translator(lang)
    notes = [t("%(repository)s: %(note)s", repository=f.repository, note=note)
             for f in facts for note in f.own_notes]
    every = [pull for f in facts for pull in f.pulls]
    unrecorded = [f for f in facts if not f.reviews_recorded]
    if unrecorded and len(unrecorded) < len(facts):
        # One sentence for all of them: the same note under each name reads as noise.
        notes.append(t("Reviews were not recorded for %(repositories)s, so approvals were "
                       "not checked.", repositories=t.join([f.repository for f in unrecorded])))
    return (*notes, *data_notes(every, len(unrecorded) < len(facts), t))


def _round_robin(lists: Iterable[Sequence[str]]) -> tuple[str, ...]:
    """The first item of each list, then the second of each...: a short view of the
    combined list shows something of every repository."""
    return tuple(item for row in zip_longest(*lists) for item in row if item is not None)


def combine(parts: Sequence[Digest], *, focus: tuple[str, ...] = (),
            notes: tuple[str, ...] | None = None) -> Digest:
    """The digest of several repositories' same week, in the parts' language; `parts`
    in the order the channel lists them. One part is returned as it is. `notes` (see
    `combined_notes`) replace the parts' own, each named by its repository otherwise."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    t = translator(first.lang)
    counts = _sum_counts(parts)
    if notes is None:
        notes = tuple(chain.from_iterable(
            (t("%(repository)s: %(note)s", repository=p.repository, note=note)
             for note in p.notes) for p in parts))
    known = [p.data_as_of for p in parts if p.data_as_of is not None]
    return Digest(
        repository=", ".join(p.repository for p in parts),
        week=first.week,
        period=first.period,
        counts=counts,
        topics=merge_names((p.topics for p in parts), counts.total, focus),
        types=merge_names((p.types for p in parts), counts.total),
        hot_files=(),
        themes=(),
        risks=(),
        key_pulls=(),
        # Each repository's suggestions speak of its own week ("npu makes up 43% of the
        # week"): its part keeps them, drawn under its name; the combined list, read
        # without that name, writes each reference in full.
        suggestions=_round_robin([qualify(s, p.repository) for s in p.suggestions]
                                 for p in parts),
        lang=first.lang,
        notes=notes,
        data_as_of=min(known) if known else None,
        risk_data=any(p.risk_data for p in parts),
        repositories=tuple(repository_counts(p) for p in parts),
        parts=tuple(parts),
    )
