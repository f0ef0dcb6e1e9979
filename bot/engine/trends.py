"""Counts and shares by topic and type, and the files touched by the most PRs."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

import msgspec

from bot.engine.areas import Areas, is_lock_file, is_release_note
from bot.i18n import Translator
from bot.models import HotFile, NameCount, PullRequest, Theme

HOT_FILES = 5


def _(message: str) -> str:
    """Marks a name for the catalog extractor; translated where it is used."""
    return message


# What each change type is called in the trends' prose ("bug fixes", 问题修复); CI is
# CI in every language.
TYPE_NAMES = {
    "fix": _("bug fixes"), "feat": _("new features"), "perf": _("performance changes"),
    "refactor": _("refactoring"), "docs": _("docs"), "test": _("tests"), "ci": "CI",
    "build": _("build"), "chore": _("maintenance"), "style": _("style"),
    "revert": _("reverts"), "other": _("other"),
}
# One PR's type as an answer names it ("Type: new feature.").
TYPE_NAME = {
    "fix": _("bug fix"), "feat": _("new feature"), "perf": _("performance change"),
    "refactor": _("refactoring"), "docs": _("docs"), "test": _("tests"), "ci": "CI",
    "build": _("build"), "chore": _("maintenance"), "style": _("style"),
    "revert": _("revert"), "other": _("unclassified"),
}


def count_names(
    tagged: Iterable[tuple[int, Iterable[str]]],
    total: int,
    previous: dict[str, int] | None = None,
) -> tuple[NameCount, ...]:
    """(PR number, names) pairs to counts, most frequent first, ties by name."""
    pulls: dict[str, list[int]] = defaultdict(list)
    for number, names in tagged:
        for name in dict.fromkeys(names):
            pulls[name].append(number)
    ranked = sorted(pulls.items(), key=lambda item: (-len(item[1]), item[0]))
    return tuple(
        NameCount(
            name=name,
            count=len(numbers),
            share=round(len(numbers) / total, 4) if total else 0.0,
            pulls=tuple(sorted(numbers)),
            previous=None if previous is None else previous.get(name, 0),
        )
        for name, numbers in ranked
    )


def hot_files(pulls: Iterable[PullRequest], limit: int = HOT_FILES, *,
              routine: frozenset[int] = frozenset()) -> tuple[HotFile, ...]:
    """Files changed by at least two PRs, most PRs first; lock files, release notes (a
    release removes the notes its PRs added) and the `routine` PRs (dependency updates,
    branch syncs) left out."""
    touched: dict[str, list[int]] = defaultdict(list)
    for pull in pulls:
        if pull.number in routine:
            continue
        for path in dict.fromkeys(f.path for f in pull.files if not is_lock_file(f.path)
                                  and not is_release_note(f.path)):
            touched[path].append(pull.number)
    counts = Counter({path: len(numbers) for path, numbers in touched.items()})
    ranked = sorted((item for item in counts.items() if item[1] >= 2),
                    key=lambda item: (-item[1], item[0]))
    return tuple(
        HotFile(path=path, pulls=count, numbers=tuple(sorted(touched[path])))
        for path, count in ranked[:limit]
    )


def topic_counts(
    tagged: Iterable[tuple[int, Iterable[str]]],
    total: int,
    areas: Areas,
    *,
    previous: dict[str, int] | None = None,
    focus: tuple[str, ...] = (),
) -> tuple[NameCount, ...]:
    """(PR number, topics) pairs to counts by area: spelling variants and aliases are one
    topic (`kv-offload`, `kv_offload`; `ckpt` in `checkpoint`), labelled by the area's
    name; the `focus` topics first."""
    counts = count_names(((number, [areas.canonical(a) for a in areas.keys(topics)])
                          for number, topics in tagged), total, previous)
    labelled = tuple(msgspec.structs.replace(c, label=areas.name(areas.key(c.name)))
                     for c in counts)
    if not focus:
        return labelled
    first = {areas.canonical(a) for a in areas.keys(focus)}
    return tuple(sorted(labelled, key=lambda c: c.name not in first))


def work_counts(topics: Iterable[NameCount], routine: set[int], total: int
                ) -> tuple[NameCount, ...]:
    """`topics` without the `routine` PRs (dependency updates, branch syncs), shares
    still of all `total` PRs of the week, in the same order; a topic of routine PRs
    only is left out."""
    out = []
    for c in topics:
        kept = tuple(n for n in c.pulls if n not in routine)
        if kept:
            out.append(msgspec.structs.replace(
                c, count=len(kept), share=round(len(kept) / total, 4) if total else 0.0,
                pulls=kept))
    return tuple(out)


def type_counts(typed: Iterable[tuple[int, str]], total: int, t: Translator
                ) -> tuple[NameCount, ...]:
    """(PR number, type) pairs to counts, each labelled in the reader's language."""
    counts = count_names(((number, (kind,)) for number, kind in typed), total)
    return tuple(msgspec.structs.replace(c, label=t(TYPE_NAMES.get(c.name, c.name)))
                 for c in counts)


def area_counts(topics: Iterable[NameCount], themes: Iterable[Theme], total: int, *,
                first: Iterable[str] = (), previous: dict[str, int] | None = None
                ) -> tuple[NameCount, ...]:
    """The topics as the trends' prose counts them, beside the themes: a topic's PRs are
    those carrying it and those its area's theme holds (placed there by their folder),
    so a theme's heading never counts more PRs than its topic ("Models: 28" under
    "Models (11)" read as two answers to one question). A PR on several topics still
    counts in each; the themes place it once. The `first` topics (a channel's focus)
    first, then most PRs first, ties by name; `previous`: last week's count by name (an
    area it does not name had none)."""
    pulls: dict[str, set[int]] = {}
    labels: dict[str, str] = {}
    for c in topics:
        pulls[c.name] = set(c.pulls)
        labels[c.name] = c.label
    for theme in themes:
        if theme.topic:
            pulls.setdefault(theme.topic, set()).update(theme.pulls, theme.others)
            labels.setdefault(theme.topic, theme.title)
    pinned = set(first)
    ranked = sorted(pulls.items(), key=lambda item: (item[0] not in pinned, -len(item[1]),
                                                     item[0]))
    return tuple(NameCount(name=name, count=len(numbers),
                           share=round(len(numbers) / total, 4) if total else 0.0,
                           pulls=tuple(sorted(numbers)), label=labels[name],
                           previous=None if previous is None else previous.get(name, 0))
                 for name, numbers in ranked if numbers)
