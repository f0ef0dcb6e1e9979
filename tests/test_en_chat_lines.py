"""The English chat digest of the real weeks reads as the Chinese one does, within the
same budget: whole lines (a PR's line cut only after a mark that ends a clause, never
mid-phrase: "Guard lm-format-enforcer regex compile with… (#47595)"), the security
theme with every fix it holds, at least three themes and four key PRs. Rendered as
`prdigest digest ... --format text --lang en` prints them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot.render.chat import BUDGET, visible_length
from testkit.cli import CONFIG, real_week

pytestmark = pytest.mark.realdata

WEEKS = [("vllm-project/vllm", "vllm-2026-W29.json", []),
         ("verl-project/verl", "verl-2026-07.json", ["--config", CONFIG]),
         ("verl-project/verl", "verl-2026-07.json", [])]
_THEME_ITEM = re.compile(r"^  - (?P<text>.+) \(#(?P<number>\d+)\)$")
_QUICK_ITEM = re.compile(r"^• #(?P<number>\d+) (?P<text>.+)$")
_HEADING = re.compile(r"^• (?P<area>[^:]+): ")
# What may end a clause where a line is cut.
_CLAUSE_END = re.compile(r"^\s*[;:,—–]")


def _render(shared_data: Path, repo: str, file: str, extra: list[str], fmt: str,
            lang: str) -> str:
    return real_week(shared_data, repo, file, fmt, lang, *extra)


def _sources(pull: dict[str, Any]) -> list[str]:
    return [s for s in (pull.get("line", ""), pull.get("short_title", ""), pull["title"],
                        pull.get("summary", "")) if s]


def _cut_at_a_clause(shown: str, sources: list[str]) -> bool:
    """Whether `shown`, ending in an ellipsis, is one of `sources` cut where a clause
    ends (the text after the cut opens with a clause mark), or as the digest's own
    line for the PR gives it (cut there where a clause ends, `bot.engine.summarize`)."""
    if shown in sources:
        return True
    kept = shown.removesuffix("…").rstrip()
    return any(s.startswith(kept) and _CLAUSE_END.match(s[len(kept):]) for s in sources)


@pytest.mark.parametrize("repo, file, extra", WEEKS)
def test_en_chat_lines_are_whole_or_cut_where_a_clause_ends(
    shared_data: Path, repo: str, file: str, extra: list[str]
) -> None:
    text = _render(shared_data, repo, file, extra, "text", "en")
    pulls = {k["number"]: k for k in json.loads(
        _render(shared_data, repo, file, extra, "json", "en"))["key_pulls"]}
    lines = [m for m in (_THEME_ITEM.match(ln) or _QUICK_ITEM.match(ln)
                         for ln in text.splitlines()) if m]
    assert lines
    for match in lines:
        pull = pulls[int(match["number"])]
        # A key PR's line is its title, then what follows the title.
        shown = match["text"].removeprefix(pull.get("short_title") or "").lstrip(": ")
        for part in shown.split("; "):
            if part.endswith("…"):
                assert _cut_at_a_clause(part, _sources(pull)), match.group(0)


@pytest.mark.parametrize("repo, file, extra", WEEKS)
def test_en_chat_keeps_the_important_items_within_the_budget(
    shared_data: Path, repo: str, file: str, extra: list[str]
) -> None:
    text = _render(shared_data, repo, file, extra, "text", "en")
    assert visible_length(text) <= BUDGET
    body = text.split("\nKey changes\n\n", 1)[1].split("\nModule and topic trends\n", 1)[0]
    themes = [block.splitlines() for block in body.split("\n\n")
              if _HEADING.match(block.strip().splitlines()[0])]
    assert len(themes) >= 3, body
    quick = text.split("\nKey PRs at a glance\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len([ln for ln in quick if _QUICK_ITEM.match(ln)]) >= 4
    assert "fixes a security" not in text


def _themes_shown(text: str, trends: str) -> int:
    body = text.split("\n\n", 3)[-1].split(trends, 1)[0]
    return len(re.findall(r"^• ", body, re.M))


def test_the_security_theme_lists_every_fix_in_both_languages(shared_data: Path) -> None:
    def render(fmt: str, lang: str) -> str:
        return _render(shared_data, "vllm-project/vllm", "vllm-2026-W29.json", [], fmt, lang)

    fixes = {p["number"] for p in json.loads(render("json", "en"))["pulls"] if p["security"]}
    assert len(fixes) >= 2
    for lang, heading, trends in (("en", "• Security:", "Module and topic trends"),
                                  ("zh", "• 安全：", "模块与主题趋势")):
        text = render("text", lang)
        block = text.split(heading, 1)[1].split("\n\n", 1)[0]
        assert {int(n) for n in re.findall(r"[(（]#(\d+)[)）]", block)} == fixes, block
        assert _themes_shown(text, trends) >= 3
