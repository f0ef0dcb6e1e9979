"""The report pages as a test reads them: an app serving the example week, and a page
parsed into what a reader sees."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from bot.config import Config
from bot.source import SnapshotSource
from bot.web.app import create_app
from testkit.server_support import (
    clock,
    example_config,
    example_snapshot,
    recording_adapters,
)

REPORT = "/reports/acme/lumen/2026-W29"


class Page(HTMLParser):
    """What a reader sees: headings, links, text; and whether anything executable is in."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.h1: list[str] = []
        self.h2: list[str] = []
        self.links: list[str] = []
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.text: list[str] = []
        self._open: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._open.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        if tag == "a":
            self.links.append(dict(attrs).get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._open and self._open[-1] in ("h1", "h2"):
            getattr(self, self._open[-1]).append(data.strip())


def app_with(config: Config | None = None, *, source: Any = None, redis_url: str | None = None
             ) -> Any:
    return create_app(config or example_config(), redis_url=redis_url,
                      source=source or SnapshotSource(example_snapshot()), clock=clock(),
                      background=False, adapters=recording_adapters())
