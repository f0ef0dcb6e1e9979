"""What the digest templates read: the digest plus the selections they show.

Choices of structure (how many PRs in the quick view, which PRs a theme lists, and,
from `bot.render.sections`, which sections in which order) live here in code; the
templates only put words around them.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cached_property

from bot.models import Digest, KeyPull, NameCount, Risk, Theme
from bot.render import sections as registry
from bot.render.sections import Section

QUICK_VIEW = 6
THEME_ITEMS = 6
TOP_TOPICS = 3
NOTABLE = 4


class ThemeView:
    def __init__(self, theme: Theme, items: list[KeyPull], limit: int) -> None:
        self.theme = theme
        self.items = items[:limit]
        self.more = max(0, len(items) - limit)


class DigestView:
    """Read-only helpers over a `Digest` for templates of every format."""

    def __init__(self, digest: Digest, *, quick_view: int = QUICK_VIEW,
                 theme_items: int = THEME_ITEMS) -> None:
        self.d = digest
        self._quick_view = quick_view
        self._theme_items = theme_items

    @property
    def sections(self) -> tuple[Section, ...]:
        """The sections every format shows, in order; read from the registry at each
        render, so the registry alone decides."""
        return registry.DIGEST_SECTIONS

    # --- narration (bot.narrate): its sentences replace a section's engine text -----

    def narrated(self, section_id: str) -> tuple[str, ...] | None:
        """The verified narrated sentences shown instead of the section's own text, or
        None (no narrator, or the section fell back). Escaped like any GitHub text."""
        narration = self.d.narration
        if narration is None:
            return None
        return next((p.sentences for p in narration.prose if p.section == section_id), None)

    @staticmethod
    def narrated_as_paragraph(section_id: str) -> bool:
        """Summary and trends read as one paragraph; other sections as one item each."""
        return section_id in {"summary", "trends"}

    @cached_property
    def key_by_number(self) -> dict[int, KeyPull]:
        return {k.number: k for k in self.d.key_pulls}

    def url(self, number: int) -> str:
        """A PR's address: from the digest when it is a key PR, else on the same host."""
        if number in self.key_by_number:
            return self.key_by_number[number].url
        sample = next((k.url for k in self.d.key_pulls if k.url), "")
        if sample and "/pull/" in sample:
            return f"{sample.rsplit('/pull/', 1)[0]}/pull/{int(number)}"
        return f"https://github.com/{self.d.repository}/pull/{int(number)}"

    @property
    def year(self) -> int:
        return int(self.d.week[:4])

    @property
    def week_number(self) -> int:
        return int(self.d.week.split("W")[1])

    @property
    def since(self) -> str:
        return self.d.period.since.strftime("%Y-%m-%d")

    @property
    def until(self) -> str:
        """The last day of the week (the period's end is the next Monday, exclusive)."""
        return (self.d.period.until - timedelta(days=1)).strftime("%Y-%m-%d")

    @property
    def since_short(self) -> str:
        return self.since[5:]

    @property
    def until_short(self) -> str:
        return self.until[5:]

    @cached_property
    def top_topics(self) -> list[NameCount]:
        return list(self.d.topics[:TOP_TOPICS])

    @cached_property
    def features(self) -> list[KeyPull]:
        return [k for k in self.d.key_pulls if k.type in {"feat", "perf"}][:NOTABLE]

    @cached_property
    def fixes(self) -> list[KeyPull]:
        return [k for k in self.d.key_pulls if k.type in {"fix", "revert"}][:NOTABLE - 1]

    @cached_property
    def serious_risks(self) -> list[Risk]:
        return [r for r in self.d.risks if r.severity == "high"]

    @cached_property
    def quick(self) -> list[KeyPull]:
        return list(self.d.key_pulls[: self._quick_view])

    @cached_property
    def themes(self) -> list[ThemeView]:
        return [
            ThemeView(theme, [self.key_by_number[n] for n in theme.pulls
                              if n in self.key_by_number], self._theme_items)
            for theme in self.d.themes
        ]

    @cached_property
    def leading_type(self) -> NameCount | None:
        return self.d.types[0] if self.d.types else None

    @cached_property
    def other_types(self) -> list[NameCount]:
        return list(self.d.types[1:3])

    @cached_property
    def topic_changes(self) -> list[NameCount]:
        """Topics whose count moved since the previous week, largest move first."""
        moved = [t for t in self.d.topics if t.previous is not None and t.previous != t.count]
        return sorted(moved, key=lambda t: (-abs(t.count - (t.previous or 0)), t.name))[:3]
