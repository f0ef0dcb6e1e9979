"""Group key PRs into themes for "key changes": configured topics first, then by kind."""

from __future__ import annotations

from collections import Counter

from bot.config import RepoConfig
from bot.engine.classify import Classification
from bot.i18n import Translator
from bot.models import Theme

MAX_MODULES_IN_TITLE = 3
_FAMILIES = (
    ("features", ("feat", "perf")),
    ("fixes", ("fix", "revert")),
    ("refactoring", ("refactor",)),
    ("docs", ("docs",)),
    ("maintenance", ("ci", "test", "build", "chore", "style", "other")),
)


def _family_titles(t: Translator) -> dict[str, str]:
    return {
        "features": t("New features and performance"),
        "fixes": t("Bug fixes"),
        "refactoring": t("Refactoring"),
        "docs": t("Documentation"),
        "maintenance": t("CI, build and maintenance"),
    }


def build_themes(
    ranked: list[tuple[int, Classification]],
    repo_config: RepoConfig,
    t: Translator,
    *,
    focus_topics: tuple[str, ...] = (),
) -> tuple[Theme, ...]:
    """`ranked` is the key PRs, best first; each PR lands in exactly one theme."""
    placed: set[int] = set()
    themes: list[Theme] = []
    size = {t: sum(1 for _, cls in ranked if t in cls.topics) for t in repo_config.topics}
    configured = sorted(repo_config.topics,
                        key=lambda name: (name not in focus_topics, -size[name], name))
    for topic in configured:
        members = [n for n, cls in ranked if topic in cls.topics and n not in placed]
        if len(members) >= 2:
            label = repo_config.topics[topic].label or topic
            themes.append(Theme(title=t("%(topic)s changes", topic=label), pulls=tuple(members),
                                key=f"topic:{topic}"))
            placed.update(members)
    titles = _family_titles(t)
    for family, types in _FAMILIES:
        family_members = [(n, c) for n, c in ranked if c.type in types and n not in placed]
        if not family_members:
            continue
        modules = Counter(m for _, c in family_members for m in c.modules)
        top = [name for name, _ in sorted(modules.items(), key=lambda i: (-i[1], i[0]))]
        title = titles[family]
        if top:
            title = t("%(title)s (%(modules)s)", title=title,
                      modules=t.join(top[:MAX_MODULES_IN_TITLE]))
        themes.append(Theme(title=title, pulls=tuple(n for n, _ in family_members), key=family))
        placed.update(n for n, _ in family_members)
    return tuple(themes)
