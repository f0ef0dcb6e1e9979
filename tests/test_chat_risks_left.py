"""The chat digest shows the worst risks its room allows and says in the section's
heading how many of all it lists, so the summary's count ("11 risk observations need a
look") is never left unexplained by the list below it."""

from __future__ import annotations

import re

import pytest

from bot.config import load_config
from bot.engine import build_digest
from bot.models import Lang
from bot.render import render_digest
from bot.snapshot import read_snapshot
from testkit import EXAMPLES

HEADING = {"en": r"\nRisk observations \((\d+) of (\d+)\)\n",
           "zh": r"\n风险观察（列出 (\d+) 条，共 (\d+) 条）\n"}
RISK_LINE = {"en": re.compile(r"^• PR#\d+ \[(high|medium|low)\]", re.M),
             "zh": re.compile(r"^• PR#\d+【[高中低]】", re.M)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_chat_heading_counts_the_risks_it_lists_of_all(lang: Lang) -> None:
    config = load_config(EXAMPLES / "prdigest.toml")
    digest = build_digest(read_snapshot(EXAMPLES / "snapshot.json"), "2026-W29",
                          repo_config=config.repo("acme/lumen"), lang=lang)
    text = render_digest(digest, "text")
    shown = len(RISK_LINE[lang].findall(text))
    heading = re.search(HEADING[lang], text)
    assert 0 < shown < len(digest.risks), text  # the chat form's room leaves some out
    assert heading is not None, text
    assert (int(heading[1]), int(heading[2])) == (shown, len(digest.risks)), text
    full = render_digest(digest, "markdown")  # lists them all, under its plain heading
    assert len(re.findall(r"^- \*\*PR#", full, re.M)) == len(digest.risks)
    assert {"en": "## Risk observations\n", "zh": "## 风险观察\n"}[lang] in full
