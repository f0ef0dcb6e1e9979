"""What the compact chat digest (a channel's `style = "compact"`) selects from a digest:
the same facts as the full one, each said in one short line.

The compact form is not the full chat digest cut short: its summary is the week's counts
and one more sentence, each top theme one line with its size, the risks their count and
the most severe, the key PRs their titles, the follow-ups one line. How many of each and
how long a line may be come from the view's `Limits` (`bot.render.chat.COMPACT_STEPS`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from bot.engine.text import cut_words
from bot.models import Digest, KeyPull, Risk

# What a risk adds to its finding when the data cannot tell whether it was resolved:
# the full report says it, the compact line keeps the finding.
_UNRECORDED = re.compile(r"; whether it was (?:resolved before merge|addressed) is not recorded"
                         r"|，(?:合并前)?是否(?:解决|已处理)未记录")
# The code a risk's lead names ("(in `x`, `y`)"): the full report names it.
_SUBJECTS = re.compile(r" \(in `[^)]*\)|（涉及 `[^）]*）")
# A risk's finding is never cut shorter than this, whatever the view's line length: it
# is what the risks line is for.
RISK_LINE = 112


@dataclass(frozen=True, slots=True)
class BriefTheme:
    """A top theme in one line: its title, how many PRs of the week it holds, and the
    numbers of its first key PRs."""

    title: str
    size: int
    numbers: tuple[int, ...]


class Brief:
    """The compact form's selections. `short` fits a text to the view's line length;
    `themes`, `numbers` and `risks` are how many themes, PR numbers per theme and risks
    it shows; `quick`, the key PRs."""

    def __init__(self, digest: Digest, short: Callable[[str], str], *, themes: int,
                 numbers: int, risks: int, quick: Sequence[KeyPull]) -> None:
        self.d = digest
        self._short = short
        self._themes = themes
        self._risks = risks
        self._numbers = numbers
        self._quick = quick

    @cached_property
    def themes(self) -> list[BriefTheme]:
        """The first themes holding key PRs (the engine orders them, most telling first)."""
        shown = [t for t in self.d.themes if t.pulls][: self._themes]
        return [BriefTheme(title=self._short(t.title), size=len(t.pulls) + len(t.others),
                           numbers=t.pulls[: self._numbers]) for t in shown]

    def risk_text(self, risk: Risk) -> str:
        """The finding of a risk, the file named by its name alone."""
        text = _SUBJECTS.sub("", _UNRECORDED.sub("", risk.summary)).rstrip("。.")
        if risk.path and "/" in risk.path:
            text = text.replace(risk.path, risk.path.rsplit("/", 1)[-1])
        return cut_words(text, RISK_LINE)

    @cached_property
    def risks(self) -> list[Risk]:
        """The most severe risks (the digest holds them most severe first), one line
        each: a risk that would read as the line before it (two concerns on one file)
        gives its place to the next."""
        shown: list[Risk] = []
        lines: set[tuple[int, str]] = set()
        for risk in self.d.risks:
            if len(shown) == self._risks:
                break
            line = (risk.pull, self.risk_text(risk))
            if line not in lines:
                lines.add(line)
                shown.append(risk)
        return shown

    @cached_property
    def quick(self) -> list[KeyPull]:
        """The key PRs the view names (`DigestView.quick`), so that each item's button
        opens the PR the item names."""
        return list(self._quick)

    def title(self, k: KeyPull) -> str:
        return self._short(k.headline or k.short_title or k.title)

    @cached_property
    def security(self) -> list[int]:
        """The security fixes of the week, by number: the summary names them first."""
        return [p.number for p in self.d.pulls if p.security]
