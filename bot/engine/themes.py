"""Group the week's PRs into themes: change areas, each line saying its kinds of change.

A theme is an area (`bot.engine.areas`): a configured topic, else a title module, else
the folder most of a PR's files are in. Each PR lands in exactly one theme: the
week's security fixes first (a theme of their own), then the areas chosen one at a
time, configured topics before the rest, the area holding most of the PRs still
unplaced next; `MAX_THEMES` of at least `MIN_PULLS` PRs each, more while "Other
changes" would hold more than `OTHER_SHARE` of the week; then the dependency updates,
one theme of their own (never key); what is left is "Other changes". A theme's line
counts its PRs by kind ("5 fixes, 4 CI and maintenance changes"), every PR of it, key or
not.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.engine.areas import Areas, docs_only, lock_files_only
from bot.engine.classify import Classification
from bot.engine.conventions import Bumped, bumped
from bot.i18n import Translator
from bot.models import NameCount, Theme

MAX_THEMES = 8
MIN_PULLS = 2
# "Other changes" holds at most this share of a week: while it holds more, areas are
# added beyond `MAX_THEMES`, up to `WIDE_THEMES` themes (of one PR only where no area
# of two is left).
OTHER_SHARE = 0.25
WIDE_THEMES = 16
# How many other areas a theme's `about` names.
ABOUT = 3
KINDS = ("security", "features", "performance", "fixes", "reverts", "refactoring", "docs",
         "tests", "maintenance", "other")
_KIND_OF_TYPE = {
    "feat": "features", "perf": "performance", "fix": "fixes", "revert": "reverts",
    "refactor": "refactoring", "docs": "docs", "test": "tests", "other": "other",
}
OTHER = "other"
DEPENDENCIES = "dependencies"
# How much a PR weighs for an area by how it names it: a configured topic, a title
# module, the folder its files are in.
_WEIGHT = (2.0, 1.0, 0.5)
# Kinds a theme's line names; the rest are counted together.
LINE_KINDS = 3


@dataclass(frozen=True, slots=True)
class Member:
    """One PR as themes see it: its class, where its files are (and the folder area they
    make), and whether it is key."""

    number: int
    cls: Classification
    paths: tuple[str, ...]
    key: bool
    folder: str = ""


def kind(member: Member) -> str:
    """The kind of change: a security fix is its own kind whatever its type, and a PR
    touching only documentation is a docs change whatever its title says."""
    if member.cls.security:
        return "security"
    if docs_only(member.paths):
        return "docs"
    return _KIND_OF_TYPE.get(member.cls.type, "maintenance")


def _kind_words(t: Translator) -> dict[str, Callable[[int], str]]:
    return {
        "security": lambda n: t.n("%(num)d security fix", "%(num)d security fixes", n),
        "features": lambda n: t.n("%(num)d feature", "%(num)d features", n),
        "performance": lambda n: t.n("%(num)d performance change",
                                     "%(num)d performance changes", n),
        "fixes": lambda n: t.n("%(num)d fix", "%(num)d fixes", n),
        "reverts": lambda n: t.n("%(num)d revert", "%(num)d reverts", n),
        "refactoring": lambda n: t.n("%(num)d refactor", "%(num)d refactors", n),
        "docs": lambda n: t.n("%(num)d docs change", "%(num)d docs changes", n),
        "tests": lambda n: t.n("%(num)d test change", "%(num)d test changes", n),
        "maintenance": lambda n: t.n("%(num)d CI and maintenance change",
                                     "%(num)d CI and maintenance changes", n),
        "other": lambda n: t.n("%(num)d unclassified change", "%(num)d unclassified changes",
                               n),
    }


def kinds_line(members: Sequence[Member], t: Translator) -> str:
    """The theme's PRs by kind, most first: "5 fixes, 4 CI and maintenance changes".
    PRs of no known kind are named only when nothing else is ("8 unclassified changes"
    says nothing of a theme of fixes and features): else they are among "N more"."""
    counts = Counter(kind(m) for m in members)
    words = _kind_words(t)
    ordered = sorted(counts, key=lambda k: (k == OTHER and len(counts) > 1, -counts[k],
                                            KINDS.index(k)))
    if len(ordered) > 1 and ordered[-1] == OTHER:
        # Counted as "more", never named after the others.
        named_kinds = ordered[:-1][:LINE_KINDS]
        rest = sum(counts[k] for k in ordered if k not in named_kinds)
        named = [words[k](counts[k]) for k in named_kinds]
        named.append(_others(rest, t))
        return t.sep.join(named)
    # A single kind left over is named rather than counted as "1 more".
    shown = ordered if len(ordered) <= LINE_KINDS + 1 else ordered[:LINE_KINDS]
    named = [words[k](counts[k]) for k in shown]
    rest = sum(counts[k] for k in ordered[len(shown):])
    if rest:
        named.append(_others(rest, t))
    return t.sep.join(named)


def _others(count: int, t: Translator) -> str:
    """The PRs a theme's line does not name by kind: "1 other change" (zh "另有 1 个改动";
    "其余 1 个" read as a count of nothing)."""
    return t.n("%(num)d other change", "%(num)d other changes", count)


def _candidates(member: Member, areas: Areas) -> list[tuple[str, int]]:
    """The PR's areas with their tier: configured topics 0, title modules 1, folder 2."""
    topics = areas.keys(member.cls.topics)
    found = [(a, 0 if areas.configured(a) else 1) for a in topics]
    folder = areas.key(member.folder) if member.folder else ""
    if folder and folder not in topics:
        found.append((folder, 2))
    return found


def _choose(members: list[Member], areas: Areas, focus: set[str], limit: int,
            least: int = MIN_PULLS) -> list[tuple[str, list[Member]]]:
    """Areas one at a time, each taking its unplaced PRs: focus topics first, then
    configured ones, then the area with the most weight of unplaced PRs (a PR weighs
    `_WEIGHT` of how it names the area: its title's modules outweigh its folder), then
    the one whose best PR ranks higher."""
    candidates = {m.number: _candidates(m, areas) for m in members}
    rank = {m.number: i for i, m in enumerate(members)}
    left = list(members)
    chosen: list[tuple[str, list[Member]]] = []
    while left and len(chosen) < limit:
        tally: dict[str, list[Member]] = defaultdict(list)
        weight: dict[str, float] = defaultdict(float)
        for m in left:
            for area, tier in candidates[m.number]:
                tally[area].append(m)
                weight[area] += _WEIGHT[tier]
        eligible = [a for a, group in tally.items() if len(group) >= least]
        if not eligible:
            break
        best = min(eligible, key=lambda a: (
            a not in focus, not areas.configured(a), -weight[a], -len(tally[a]),
            rank[tally[a][0].number], a))
        chosen.append((best, tally[best]))
        taken = {m.number for m in tally[best]}
        left = [m for m in left if m.number not in taken]
    return chosen


def _about(members: Sequence[Member], area: str, areas: Areas) -> tuple[NameCount, ...]:
    """The other areas the theme's PRs touch, most PRs first (at least two each)."""
    seen: Counter[str] = Counter()
    for m in members:
        found = set(areas.keys(m.cls.topics))
        if m.folder:
            found.add(areas.key(m.folder))
        seen.update(found - {area, ""})
    ranked = sorted((a for a in seen if seen[a] >= MIN_PULLS), key=lambda a: (-seen[a], a))
    return tuple(NameCount(name=areas.canonical(a), label=areas.name(a), count=seen[a],
                           share=round(seen[a] / len(members), 4))
                 for a in ranked[:ABOUT])


def _theme(area: str, title: str, kind_of_theme: str, group: list[Member], areas: Areas,
           t: Translator) -> Theme:
    if areas.configured(area):
        # A configured topic matches bodies too: the PRs whose title names it first (best
        # first among them), so an NPU theme opens with "fix build_npu_attn_mask oom", not
        # with a vision-token fix whose body mentions a crash on NPU.
        group = sorted(group, key=lambda m: not (area in areas.keys(m.cls.modules) or
                                                 areas.named_in(area, m.cls.short_title)))
    return Theme(title=title, pulls=tuple(m.number for m in group if m.key),
                 others=tuple(m.number for m in group if not m.key),
                 key=f"{kind_of_theme}:{area}" if area else kind_of_theme,
                 kind=kind_of_theme, area=area, kinds=kinds_line(group, t),
                 about=_about(group, area, areas),
                 topic=areas.canonical(area) if kind_of_theme == "area" else "")


def _widen(chosen: list[tuple[str, list[Member]]], rest: list[Member], areas: Areas,
           focus: set[str], total: int, room: int) -> bool:
    """More areas (added to `chosen`) while the PRs no area takes are more than
    `OTHER_SHARE` of the week's `total` and `room` holds them with "Other changes";
    whether any was added."""
    added = False
    while True:
        placed = {m.number for _, group in chosen for m in group}
        left = [m for m in rest if m.number not in placed]
        if len(left) <= OTHER_SHARE * total or len(chosen) + 1 >= room:
            return added
        more = _choose(left, areas, focus, 1) or _choose(left, areas, focus, 1, least=1)
        if not more:
            return added
        chosen += more
        added = True


def build_themes(
    members: list[Member],
    areas: Areas,
    t: Translator,
    *,
    focus_topics: tuple[str, ...] = (),
    limit: int = MAX_THEMES,
) -> tuple[Theme, ...]:
    """`members` is the week's PRs, key ones first, best first; at most `limit` themes
    in reading order: security, then focus topics, then by size; "Other changes" last."""
    security = [m for m in members if m.cls.security]
    bumps = [m for m in members if m.cls.bump and not m.cls.security]
    rest = [m for m in members if not m.cls.security and not m.cls.bump]
    focus = set(areas.keys(focus_topics))
    themes: list[Theme] = []
    if security:
        themes.append(_theme("security", areas.name("security"), "security", security,
                             areas, t))
    rank = {m.number: i for i, m in enumerate(members)}
    chosen = _choose(rest, areas, focus, limit - len(themes))
    widened = _widen(chosen, rest, areas, focus, len(members), room=WIDE_THEMES - len(themes))
    if not widened and len(themes) + len(chosen) == limit and len(chosen) > 1 and \
            sum(len(group) for _, group in chosen) < len(rest):
        chosen.pop()  # "Other changes" is one of the `limit` themes: the last area joins it
    chosen.sort(key=lambda item: (item[0] not in focus, -len(item[1]),
                                  -sum(m.key for m in item[1]), rank[item[1][0].number]))
    themes += [_theme(area, areas.name(area), "area", group, areas, t)
               for area, group in chosen]
    if bumps:
        themes.append(_dependency_theme(bumps, t))
    placed = {m.number for _, group in chosen for m in group}
    left = [m for m in rest if m.number not in placed]
    if left:
        themes.append(_theme("", t("Other changes"), OTHER, left, areas, t))
    return tuple(themes)


def _updated(member: Member, t: Translator) -> Bumped:
    """What an update updates; a PR of lock files whose title names nothing updated
    ("Fix Pyodide lockfile") relocks "lock files"."""
    update = bumped(member.cls.short_title)
    if update.names == (member.cls.short_title,) and lock_files_only(member.paths):
        return Bumped((t("lock files"),), major=False)
    return update


# How many dependencies the dependency theme names; the rest are counted.
NAMED_DEPENDENCIES = 3


def _dependency_theme(bumps: list[Member], t: Translator) -> Theme:
    """The week's dependency updates as one theme, never key: how many and what they
    updated ("5 updates (gitpython, cryptography, pymdown-extensions and 2 more)")."""
    named = [_updated(m, t) for m in bumps]
    # Moves to a new major version first (a reader checks those), then in the week's order.
    ordered = sorted(named, key=lambda update: not update.major)
    names = list(dict.fromkeys(name for update in ordered for name in update.names))
    shown = names[:NAMED_DEPENDENCIES]
    # "and 2 more" counts the updates none of whose names is shown.
    more = sum(1 for update in named if not set(update.names) & set(shown))
    if more and shown:
        shown.append(t.n("%(num)d more", "%(num)d more", more))
    # Updates that name nothing (`chore: upgrade deps`) are only counted: "2 updates
    # (2 more)" would promise names never given.
    line = t.n("%(num)d update (%(names)s)", "%(num)d updates (%(names)s)", len(bumps),
               names=t.join(shown)) if shown else \
        t.n("%(num)d update", "%(num)d updates", len(bumps))
    return Theme(title=t("Dependency updates"), pulls=(),
                 others=tuple(m.number for m in bumps), key=DEPENDENCIES, kind=DEPENDENCIES,
                 kinds=line)
