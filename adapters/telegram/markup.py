"""Telegram's HTML parse mode: how GitHub text is escaped and marked up in a Telegram
message."""

from __future__ import annotations

import html
import re
from typing import ClassVar

from bot.render.markup import clean as _clean

_TG_MENTION = re.compile(r"@(?=\w)")
_TG_LINK_TARGET = re.compile(r"https?://\S+", re.I)


class TelegramMarkup:
    """Telegram HTML parse mode: `& < >` escaped, only Telegram's tags used.

    A word joiner after `@` keeps `@all` or `@someone` in a PR title from becoming a
    mention that notifies; links go only to http(s), since `tg://user?id=` would mention
    too. Text inside a tag stays on one line, so splitting at line ends never cuts a tag.
    """

    name: ClassVar[str] = "telegram"

    def esc(self, text: object) -> str:
        return _TG_MENTION.sub("@\u2060", html.escape(_clean(text), quote=False))

    def _inline(self, text: object) -> str:
        return " ".join(self.esc(text).splitlines())

    def bold(self, text: object) -> str:
        return f"<b>{self._inline(text)}</b>"

    def code(self, text: object) -> str:
        return f"<code>{self._inline(text)}</code>"

    def link(self, url: str, label: object) -> str:
        target = _clean(url).strip()
        if not _TG_LINK_TARGET.fullmatch(target):
            return self._inline(label)
        return f'<a href="{html.escape(target, quote=True)}">{self._inline(label)}</a>'

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        label = f"{repo}#{int(number)}"
        return self.link(url, label) if url else self.esc(label)
