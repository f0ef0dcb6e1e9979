"""A theme in the chat digest adds up: the PR lines it shows plus its "N more" are the
PRs its heading counts (a heading of 8 PRs showing 3 says 5 more, not the 2 key PRs
left). Read on the real weeks, in both languages, as `prdigest digest` prints them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app

pytestmark = pytest.mark.realdata

_HEADING = re.compile(r"^• (?P<area>[^：:]+)[：:](?P<kinds>.+)$")
_MORE = re.compile(r"^\s+- (?:另有 (?P<zh>\d+) 个 PR|(?P<en>\d+) more PRs? in the full report)")
_ITEM = re.compile(r"^\s+- ")


def _themes(text: str) -> list[tuple[str, int, int]]:
    """(area, PRs its heading counts, PRs its lines account for) per theme shown."""
    body = text.split("\n\n")
    found = []
    for block in body:
        lines = block.splitlines()
        if not lines or not (heading := _HEADING.match(lines[0])):
            continue
        items = [line for line in lines[1:] if _ITEM.match(line)]
        if not items:
            continue
        counted = sum(int(n) for n in re.findall(r"\d+", heading["kinds"]))
        shown = 0
        for line in items:
            more = _MORE.match(line)
            shown += int(more["zh"] or more["en"]) if more else 1
        found.append((heading["area"], counted, shown))
    return found


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("repo, file", [("verl-project/verl", "verl-2026-07.json"),
                                        ("vllm-project/vllm", "vllm-2026-W29.json")])
def test_a_themes_lines_and_its_more_add_up_to_its_heading(
    shared_data: Path, repo: str, file: str, lang: str
) -> None:
    result = CliRunner().invoke(app, [
        "digest", repo, "--week", "2026-W29", "--snapshot", str(shared_data / file),
        "--format", "text", "--lang", lang])
    assert result.exit_code == 0, result.output
    key_changes = result.stdout.split("\n\n", 3)[-1]
    themes = _themes(key_changes)
    assert len(themes) >= 2, result.stdout
    for area, counted, shown in themes:
        assert shown == counted, f"{area}: heading counts {counted}, lines give {shown}"
