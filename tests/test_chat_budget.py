"""The chat digest's fitting: the most generous step that fits, found without rendering
every step; a week of hundreds of PRs names a few of them after its hot file."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import msgspec
import pytest

from bot.config import load_config
from bot.engine import build_digest
from bot.engine.digest import week_pulls
from bot.models import Digest, Lang, PullRequest
from bot.render import chat as chat_module
from bot.render import render_digest
from bot.render.chat import BUDGET, STEPS, chat_fit, visible_length
from bot.snapshot import read_snapshot
from testkit import EXAMPLES

WEEK = "2026-W29"


def _big_week(copies: int, lang: Lang) -> Digest:
    """The example week's merged PRs, each repeated `copies` times with new numbers."""
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    repo = load_config(EXAMPLES / "prdigest.toml").repo(snapshot.repository)
    base = [p for p, how in week_pulls(snapshot, WEEK, repo.timezone) if how == "merged"]
    pulls: list[PullRequest] = []
    for i in range(copies * len(base)):
        model = base[i % len(base)]
        assert model.merged_at is not None
        number = 50_000 + i
        merged = model.merged_at + timedelta(seconds=i % 60)
        pulls.append(msgspec.structs.replace(
            model, number=number, title=f"{model.title} ({i})", merged_at=merged,
            closed_at=merged, url=f"https://github.com/{snapshot.repository}/pull/{number}"))
    big = msgspec.structs.replace(snapshot, pulls=tuple(pulls))
    return build_digest(big, WEEK, repo_config=repo, lang=lang)


def _counting(real: Callable[..., str], calls: list[object]) -> Callable[..., str]:
    def counted(*args: object, **kwargs: object) -> str:
        calls.append(args)
        return real(*args, **kwargs)
    return counted


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_fit_is_the_first_step_that_fits_and_costs_at_most_four_renders(
        lang: Lang, monkeypatch: pytest.MonkeyPatch) -> None:
    for copies in (1, 20):
        digest = _big_week(copies, lang)
        lengths = []
        for limits in STEPS:
            monkeypatch.setattr(chat_module, "STEPS", (limits,))
            lengths.append(visible_length(chat_fit(digest)[1]))
        monkeypatch.undo()
        fitting = [i for i, n in enumerate(lengths) if n <= BUDGET]
        expected = fitting[0] if fitting else len(STEPS) - 1
        calls: list[object] = []
        monkeypatch.setattr(chat_module, "render_template",
                            _counting(chat_module.render_template, calls))
        view, text = chat_fit(digest)
        monkeypatch.undo()
        assert view.limits == STEPS[expected]
        assert len(calls) <= 4  # a binary search of nine steps
        assert render_digest(digest, "text") == text


def test_a_large_week_names_a_few_prs_after_its_hot_file() -> None:
    digest = _big_week(40, "en")
    hot = digest.hot_files[0]
    assert hot.pulls >= 40
    text = render_digest(digest, "text")
    assert visible_length(text) <= BUDGET
    named = [n for n in hot.numbers if f"#{n}" in text.split(hot.path, 1)[1].split("\n")[0]]
    assert named == list(hot.numbers[:3])
    markdown = render_digest(digest, "markdown")
    line = next(ln for ln in markdown.splitlines() if hot.path in ln and "#" in ln)
    assert f"#{hot.numbers[9]}" in line and f"#{hot.numbers[10]}, " not in line
    assert "…" in line


def test_only_key_prs_are_summarised_the_rest_listed_by_title() -> None:
    digest = _big_week(3, "en")
    keys = {k.number: k for k in digest.key_pulls}
    others = [e for e in digest.pulls if e.number not in keys]
    assert others and keys
    for entry in digest.pulls:
        if entry.number in keys:
            assert entry.line == keys[entry.number].line
        else:
            assert entry.line.rstrip("….").lower() in entry.short_title.lower()
