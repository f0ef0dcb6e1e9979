"""How much of a digest a view shows (`Limits`), and the theme items it lists.

`bot.render.chat` picks the chat form's limits; `bot.render.view` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.engine.themes import DEPENDENCIES
from bot.models import PullEntry, Theme

QUICK_VIEW = 6
THEME_ITEMS = 6
NOTABLE = 4


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of the digest a view shows; None is everything. `chat` views leave out
    the sections the full report alone has, and each item's line is at most `line`
    characters."""

    themes: int | None = None
    theme_items: int = THEME_ITEMS
    risks: int | None = None
    quick: int = QUICK_VIEW
    suggestions: int | None = None
    line: int | None = None
    notable: int = NOTABLE
    chat: bool = False
    # The compact chat form (a channel's `style = "compact"`): `bot.render.brief`.
    compact: bool = False
    # Security fixes the summary names (the rest are counted): all, unless a step says.
    security: int | None = None
    # A digest of several repositories too long for its full chat form: each
    # repository's part of a section in the compact form's lines, the follow-ups counted.
    compact_parts: bool = False
    # Whether a chat view that leaves risks out says how many the full report adds: the
    # last thing a crowded week gives up.
    risks_left: bool = True


FULL = Limits()


class ThemeLine:
    """One PR of a theme: what it does, in at most the view's line length; `original`
    the words of the PR a zh line leaves out (the HTML page shows them collapsed)."""

    def __init__(self, number: int, url: str, text: str, original: str = "") -> None:
        self.number = number
        self.url = url
        self.text = text
        self.original = original


class ThemeView:
    """A theme's key PRs as lines, at most `limit`; `more` counts every PR of the theme
    not shown (its key PRs beyond the limit and its other PRs), so "N more" adds up to
    the theme's size."""

    def __init__(self, theme: Theme, items: list[ThemeLine], limit: int,
                 listed_others: bool = False) -> None:
        """`listed_others`: the items are the theme's other PRs (a week of no key PR),
        so they are not counted again."""
        self.theme = theme
        self.items = items[:limit]
        # The dependency updates' heading names and counts them all: no "N more" line.
        self.more = 0 if theme.kind == DEPENDENCIES else (
            max(0, len(items) - limit) + (0 if listed_others else len(theme.others)))


class ThemeListing:
    """A theme of the full list: every PR of the week in it, key PRs first."""

    def __init__(self, theme: Theme, pulls: list[PullEntry]) -> None:
        self.theme = theme
        self.pulls = pulls
