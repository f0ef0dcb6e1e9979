"""Group the week's PRs into themes: change areas named by the area and the kind of change.

A theme is one kind of change (security fixes, features, fixes, refactoring, docs,
maintenance) in one area (a configured topic, else the title's first module, else the
package directory most of its files are in). Areas with a single PR of a kind join one
theme of that kind across areas; a theme describes at most `THEME_SIZE` key PRs (more
are split by their next area). Configured topics order the themes; they do not swallow
PRs of other kinds. Every PR of the week lands in exactly one theme.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from bot.config import RepoConfig
from bot.engine.classify import Classification
from bot.i18n import Translator
from bot.models import Theme

THEME_SIZE = 6
MAX_AREAS_IN_TITLE = 3
MIXED = "*"
FAMILIES = ("security", "features", "fixes", "refactoring", "docs", "maintenance")
_FAMILY_OF_TYPE = {
    "feat": "features", "perf": "features", "fix": "fixes", "revert": "fixes",
    "refactor": "refactoring", "docs": "docs",
}


@dataclass(frozen=True, slots=True)
class Member:
    """One PR as themes see it: its class, where its files are, and whether it is key."""

    number: int
    cls: Classification
    paths: tuple[str, ...]
    key: bool


def family(cls: Classification) -> str:
    """The kind of change; a security fix is its own kind whatever its type."""
    if cls.security:
        return "security"
    return _FAMILY_OF_TYPE.get(cls.type, "maintenance")


def _kind_names(t: Translator) -> dict[str, str]:
    return {
        "security": t("Security fixes"),
        "features": t("New features and performance"),
        "fixes": t("Bug fixes"),
        "refactoring": t("Refactoring"),
        "docs": t("Documentation"),
        "maintenance": t("CI, build and maintenance"),
    }


def _directory_area(paths: Sequence[str], package: str) -> str:
    """The directory most of the files are in, below the package's own folder."""
    areas: Counter[str] = Counter()
    for path in paths:
        parts = path.split("/")
        if len(parts) < 2:
            continue
        areas[parts[1] if parts[0] == package and len(parts) > 2 else parts[0]] += 1
    return min(areas, key=lambda a: (-areas[a], a)) if areas else ""


def _areas(member: Member, order: Sequence[str], package: str) -> list[str]:
    """The PR's areas, first one first: configured topics (in theme order), the title's
    modules, then its main directory."""
    found = [topic for topic in order if topic in member.cls.topics]
    found += [m for m in member.cls.modules if m not in found]
    directory = _directory_area(member.paths, package)
    if directory and directory not in found:
        found.append(directory)
    return found


def _split(groups: dict[tuple[str, str], list[Member]], areas: dict[int, list[str]]
           ) -> dict[tuple[str, str], list[Member]]:
    """A group describing more than THEME_SIZE key PRs splits by the members' next area
    (kept together where that leaves a single PR)."""
    out: dict[tuple[str, str], list[Member]] = {}
    for (kind, area), members in groups.items():
        if sum(m.key for m in members) <= THEME_SIZE:
            out[(kind, area)] = members
            continue
        if area == MIXED:
            # Across areas there is no next area to split by: parts of THEME_SIZE key PRs.
            keys = [m for m in members if m.key]
            for start in range(0, len(keys), THEME_SIZE):
                chunk = f"{MIXED}{start // THEME_SIZE or ''}"
                out[(kind, chunk)] = keys[start:start + THEME_SIZE]
            out[(kind, MIXED)] += [m for m in members if not m.key]
            continue
        parts: dict[str, list[Member]] = defaultdict(list)
        for m in members:
            rest = [a for a in areas[m.number] if a != area]
            parts[f"{area}/{rest[0]}" if rest else area].append(m)
        for name, sub in parts.items():
            target = name if len(sub) > 1 else area
            out.setdefault((kind, target), []).extend(sub)
    return out


def _title(kind: str, area_names: list[str], t: Translator) -> str:
    kinds = _kind_names(t)
    # "CI, build and maintenance in ci" says ci twice: an area the kind names is left out.
    named = kinds[kind].lower()
    area_names = [a for a in area_names if not re.search(rf"\b{re.escape(a.lower())}\b", named)]
    if not area_names:
        return kinds[kind]
    if len(area_names) > MAX_AREAS_IN_TITLE:
        # Many areas read as a list after the kind, not as a long name before it.
        return t("%(kind)s (%(areas)s and others)", kind=kinds[kind],
                 areas=t.sep.join(area_names[:MAX_AREAS_IN_TITLE]))
    return t("%(kind)s in %(area)s", kind=kinds[kind], area=t.join(area_names))


def build_themes(
    members: list[Member],
    repo_config: RepoConfig,
    t: Translator,
    *,
    package: str = "",
    focus_topics: tuple[str, ...] = (),
) -> tuple[Theme, ...]:
    """`members` is the week's PRs, key ones first, best first; the themes come in
    reading order: security, then configured (focus first) topics, then by size."""
    size = Counter(topic for m in members for topic in m.cls.topics
                   if topic in repo_config.topics)
    order = sorted(repo_config.topics, key=lambda n: (n not in focus_topics, -size[n], n))
    areas = {m.number: _areas(m, order, package) for m in members}
    grouped: dict[tuple[str, str], list[Member]] = defaultdict(list)
    for m in members:
        kind = family(m.cls)
        grouped[(kind, "" if kind == "security" else (areas[m.number] or [""])[0])].append(m)
    merged: dict[tuple[str, str], list[Member]] = defaultdict(list)
    for (kind, area), group in grouped.items():
        lone = len(group) == 1 and kind != "security"
        merged[(kind, MIXED if lone else area)].extend(group)
    rank = {m.number: index for index, m in enumerate(members)}
    themes: list[tuple[tuple[int, int, bool, int, int], Theme]] = []
    for (kind, area), group in _split(merged, areas).items():
        group.sort(key=lambda m: rank[m.number])
        if area.startswith(MIXED):
            names = list(dict.fromkeys((areas[m.number] or [""])[0] for m in group))
            names = [repo_config.topics[n].label or n if n in repo_config.topics else n
                     for n in names if n]
        else:
            top = area.split("/")[0]
            label = repo_config.topics[top].label or top if top in repo_config.topics else top
            names = [label + area[len(top):]] if area else []
        key_pulls = tuple(m.number for m in group if m.key)
        others = tuple(m.number for m in group if not m.key)
        top_area = area.split("/")[0]
        sort_key = (
            FAMILIES.index(kind) if kind == "security" else len(FAMILIES),
            order.index(top_area) if top_area in order else len(order),
            area.startswith(MIXED),  # a theme of one area reads before one across areas
            -len(key_pulls), rank[group[0].number],
        )
        themes.append((sort_key, Theme(
            title=_title(kind, names, t), pulls=key_pulls, key=f"{kind}:{area}",
            kind=kind, area=area, others=others)))
    return tuple(theme for _, theme in sorted(themes, key=lambda item: item[0]))
