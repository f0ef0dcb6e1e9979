"""Shared by the narrator tests: the example week, a config pointing at the fake model,
a Digests with a narrator over them, and the digest in every format a reader sees."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from adapters.feishu.render import digest_cards
from adapters.slack.render import render_digest_messages as slack_messages
from adapters.telegram.render import render_digest_html
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, load_config, parse_config
from bot.digests import Digests
from bot.models import Digest
from bot.narrate import NarrationStore, Narrator, narrator_for
from bot.render import render_digest
from bot.render.html import PageLinks, render_report_page
from bot.snapshot import Snapshot, read_snapshot
from bot.source import SnapshotSource

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples"
REPO = "acme/lumen"
WEEK = "2026-W29"

_LETTER = re.compile(r"[A-Za-z\u4e00-\u9fff]")


def llm_config(base_url: str, **llm: Any) -> Config:
    """The example config plus `[llm]` at `base_url`."""
    data = tomllib.loads((EXAMPLE / "prdigest.toml").read_text())
    data["llm"] = {"base_url": base_url, "model": "fake-model", "timeout_seconds": 2,
                   "budget_seconds": 20, **llm}
    return parse_config(data)


def week_config(repo: str, base_url: str | None, **llm: Any) -> Config:
    """One repository in Shanghai time, narrated by the model at `base_url` (None: not)."""
    data: dict[str, Any] = {"repos": {repo: {"timezone": "Asia/Shanghai"}}}
    if base_url is not None:
        data["llm"] = {"base_url": base_url, "model": "fake-model", **llm}
    return parse_config(data)


def snapshot_digests(config: Config, *snapshots: Snapshot) -> Digests:
    """Digests over snapshots in memory, narrated when the config has `[llm]`."""
    return Digests(config, SnapshotSource(*snapshots), narrator=narrator_for(config))


def plain_config() -> Config:
    """The example config as shipped: no `[llm]`."""
    return load_config(EXAMPLE / "prdigest.toml")


def example_digests(config: Config, store: NarrationStore | None = None,
                    narrator: Narrator | None = None, *,
                    clock: Clock = SYSTEM_CLOCK) -> Digests:
    """The example week's digests; the narrator's deadline, retries and circuit on
    `clock` (a virtual one lets its waits pass at once)."""
    source = SnapshotSource(read_snapshot(EXAMPLE / "snapshot.json"))
    return Digests(config, source,
                   narrator=narrator or narrator_for(config, store, clock=clock))


FORMATS = ("markdown", "text", "slack", "telegram", "feishu", "html")


def formats(digest: Digest) -> dict[str, str]:
    """The digest as each format shows it to its readers."""
    return {"markdown": render_digest(digest, "markdown"), "text": render_digest(digest, "text"),
            "slack": str(slack_messages(digest)), "telegram": render_digest_html(digest),
            "feishu": str(digest_cards(digest)), "html": render_report_page(digest, PageLinks())}


def every_format(digest: Digest) -> str:
    """The digest in every format, joined: what any reader could see."""
    return "\n".join(formats(digest).values())


def latin_share(text: str) -> float:
    letters = _LETTER.findall(text)
    return sum(c.isascii() for c in letters) / max(1, len(letters))
