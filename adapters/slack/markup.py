"""Slack mrkdwn: how GitHub text is escaped and marked up in a Slack message."""

from __future__ import annotations

import re
from typing import ClassVar

from bot.render.markup import clean as _clean
from bot.render.markup import is_web_url

# Slack conversation ids: C (public), G (private), D (direct), upper case and digits.
CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]{2,30}")


class SlackMarkup:
    """Slack mrkdwn: only `& < >` are escaped, so `<!channel>` in a title pings nobody."""

    name: ClassVar[str] = "slack"

    def esc(self, text: object) -> str:
        return _clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    def bold(self, text: object) -> str:
        return f"*{self.esc(text).replace('*', '∗')}*"

    def code(self, text: object) -> str:
        return f"`{self.esc(text).replace('`', 'ˋ')}`"

    def link(self, url: str, label: object) -> str:
        if not is_web_url(url):
            return self.esc(label)
        target = self.esc(url.strip()).replace("|", "%7C")
        return f"<{target}|{self.esc(label).replace('|', '¦')}>"

    def pr(self, number: int, url: str = "", repo: str = "") -> str:
        label = f"{repo}#{int(number)}"
        return self.link(url, label) if url else self.esc(label)

    def chat(self, chat_id: str) -> str:
        """A conversation as Slack names it (`<#C0123>`, a link to it); an id that is
        not one is only escaped."""
        return f"<#{chat_id}>" if CHANNEL_ID.fullmatch(chat_id) else self.esc(chat_id)
