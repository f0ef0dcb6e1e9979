"""Counts and shares by topic and type, and the files touched by the most PRs."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from bot.models import HotFile, NameCount, PullRequest

HOT_FILES = 5


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


def hot_files(pulls: Iterable[PullRequest], limit: int = HOT_FILES) -> tuple[HotFile, ...]:
    """Files changed by at least two PRs, most PRs first."""
    touched: dict[str, list[int]] = defaultdict(list)
    for pull in pulls:
        for path in dict.fromkeys(f.path for f in pull.files):
            touched[path].append(pull.number)
    counts = Counter({path: len(numbers) for path, numbers in touched.items()})
    ranked = sorted((item for item in counts.items() if item[1] >= 2),
                    key=lambda item: (-item[1], item[0]))
    return tuple(
        HotFile(path=path, pulls=count, numbers=tuple(sorted(touched[path])))
        for path, count in ranked[:limit]
    )
