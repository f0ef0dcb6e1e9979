"""Feishu card markdown: how GitHub text is escaped and marked up in a Feishu card."""

from __future__ import annotations

import re
from typing import ClassVar

from bot.render.markup import clean as _clean


class FeishuMarkup:
    """Feishu card markdown: every markdown marker and tag opener becomes a numeric
    character reference, the escape Feishu documents for its rich-text component
    (`<` -> `&#60;`, `*` -> `&#42;`), so `<at id=all>` or `**x**` from GitHub shows as
    typed. Backslash escapes are not part of Feishu's card markdown."""

    name: ClassVar[str] = "feishu"

    _SPECIAL: ClassVar[re.Pattern[str]] = re.compile(r"[&<>*_~`\\\[\]()#:$|!{}]")
    _LINE_START: ClassVar[re.Pattern[str]] = re.compile(r"^(?:([-+=])|(\d+)\.)")
    # Text shown in a code span as typed: no backtick and nothing a reader could mistake.
    _CODE_SAFE: ClassVar[re.Pattern[str]] = re.compile(r"[A-Za-z0-9 ./_+,=@-]+")

    def esc(self, text: object) -> str:
        # One line: a line break could start a heading, list or quote inside a sentence.
        flat = " ".join(_clean(text).split())
        escaped = self._SPECIAL.sub(lambda match: f"&#{ord(match.group(0))};", flat)

        def line_start(match: re.Match[str]) -> str:
            if match.group(1):
                return f"&#{ord(match.group(1))};"
            return f"{match.group(2)}&#46;"

        return self._LINE_START.sub(line_start, escaped, count=1)

    def bold(self, text: object) -> str:
        inner = self.esc(text).strip()
        return f"**{inner}**" if inner else ""

    def code(self, text: object) -> str:
        flat = " ".join(_clean(text).split())
        if flat and self._CODE_SAFE.fullmatch(flat):
            return f"`{flat}`"
        return self.esc(flat)

    @staticmethod
    def _target(url: str) -> str | None:
        """An http(s) address safe inside `(...)`, or None for anything else."""
        target = _clean(url).strip()
        if not re.match(r"^https?://\S+$", target):
            return None
        for raw, encoded in ((" ", "%20"), ("(", "%28"), (")", "%29"), ("<", "%3C"),
                             (">", "%3E"), ('"', "%22"), ("'", "%27")):
            target = target.replace(raw, encoded)
        return target

    def link(self, url: str, label: object) -> str:
        target = self._target(url)
        return f"[{self.esc(label)}]({target})" if target else self.esc(label)

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        # The label is ours (`#`, digits and a repository's name), so it needs no
        # escaping inside a link.
        target = self._target(url)
        label = f"{repo}#{int(number)}"
        return f"[{label}]({target})" if target else f"{repo}&#35;{int(number)}"
