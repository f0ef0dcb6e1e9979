"""Shared by the narrator tests: the example week, a config pointing at the fake model,
and a Digests with a narrator over them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from adapters.feishu.render import digest_cards
from adapters.slack.render import render_digest_messages as slack_messages
from adapters.telegram.render import render_digest_html
from bot.config import Config, load_config, parse_config
from bot.digests import Digests
from bot.models import Digest
from bot.narrate import NarrationStore, Narrator, narrator_for
from bot.render import render_digest
from bot.render.html import PageLinks, render_report_page
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples"
REPO = "acme/lumen"
WEEK = "2026-W29"

_LETTER = re.compile(r"[A-Za-z\u4e00-\u9fff]")


def llm_config(base_url: str, **llm: Any) -> Config:
    """The example config plus `[llm]` at `base_url`."""
    data = tomllib.loads((EXAMPLE / "prdigest.toml").read_text())
    data["llm"] = {"base_url": base_url, "model": "fake-model", "timeout_s": 2,
                   "budget_s": 20, **llm}
    return parse_config(data)


def plain_config() -> Config:
    """The example config as shipped: no `[llm]`."""
    return load_config(EXAMPLE / "prdigest.toml")


def example_digests(config: Config, store: NarrationStore | None = None,
                    narrator: Narrator | None = None) -> Digests:
    source = SnapshotSource(read_snapshot(EXAMPLE / "snapshot.json"))
    return Digests(config, source, narrator=narrator or narrator_for(config, store))


def latin_share(text: str) -> float:
    letters = _LETTER.findall(text)
    return sum(c.isascii() for c in letters) / max(1, len(letters))


def every_format(digest: Digest) -> str:
    """The digest in every format, joined: what any reader could see."""
    parts = [render_digest(digest, "markdown"), render_digest(digest, "text"),
             render_digest_html(digest), str(slack_messages(digest)),
             str(digest_cards(digest)), render_report_page(digest, PageLinks())]
    return "\n".join(parts)
