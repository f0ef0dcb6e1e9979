"""A reader asks about an area by the name the digest showed them, in either language
("文档有什么变化", "依赖升级有什么变化"), and finds the PRs whose kind of change is work
there (`docs:`, `test(...)`) wherever their files sit: the digest that counts 3 docs PRs
is never followed by an answer of none."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import parse_config
from bot.digests import Digests
from bot.models import Lang, PullRequest, Snapshot
from bot.render import render_reply
from bot.source import SnapshotSource
from testkit.pulls import MERGED_W29, merged_pull

REPO = "ant/design"
PULLS = (
    merged_pull(1, "docs: add a guide for contributors", ("docs/guide.md",)),
    merged_pull(2, "docs(List): migration notes", ("components/list/index.en-US.md",)),
    merged_pull(3, "fix(Select): align the clear icon", ("components/select/style.ts",)),
    merged_pull(4, "test(Rate): enable a11y checks", ("components/rate/__tests__/a11y.tsx",)),
    merged_pull(5, "chore: upgrade deps", ("package.json",)),
    merged_pull(6, "chore(deps): bump eslint", ("package.json",)),
)


async def _ask(text: str, lang: Lang) -> list[int]:
    config = parse_config({"repos": {REPO: {"timezone": "UTC"}},
                           "channels": [{"platform": "slack", "id": "C1", "repo": REPO,
                                         "lang": lang}]})
    handler = CommandHandler(Digests(config, SnapshotSource(Snapshot(
        repository=REPO, fetched_at=MERGED_W29, pulls=PULLS)), clock=HeldClock(MERGED_W29)))
    reply = await handler.handle(parse_command(text), channel=config.channels[0])
    assert reply.answer is not None, reply
    return sorted(p.number for p in reply.answer.pulls)


@pytest.mark.parametrize(("question", "lang", "numbers"), [
    ("文档有什么变化", "zh", [1, 2]),
    ("what changed in 文档", "en", [1, 2]),
    ("测试有什么变化", "zh", [4]),
    ("what changed in tests", "en", [4]),
    ("what changed in docs", "en", [1, 2]),
])
async def test_an_area_asked_by_its_shown_name_finds_the_prs_of_its_kind(
        question: str, lang: Lang, numbers: list[int]) -> None:
    assert await _ask(question, lang) == numbers


async def test_a_theme_asked_by_its_title_finds_its_prs() -> None:
    assert await _ask("依赖升级有什么变化", "zh") == [5, 6]


def _two_weeks() -> tuple[PullRequest, ...]:
    """`model/` PRs: two tagged and three by their folder this week, two last week."""
    last = MERGED_W29 - timedelta(days=7)
    return (
        merged_pull(1, "feat(model): add qwen3", ("model/a.py",)),
        merged_pull(2, "fix(model): load shards", ("model/b.py",)),
        *(merged_pull(n, f"Support variant {n}", (f"model/m{n}.py",)) for n in (3, 4, 5)),
        *(merged_pull(n, f"Support older variant {n}", (f"model/m{n}.py",), when=last)
          for n in (7, 8)),
    )


async def _reply_text(text: str, pulls: tuple[PullRequest, ...]) -> str:
    config = parse_config({"repos": {REPO: {"timezone": "UTC"}},
                           "channels": [{"platform": "slack", "id": "C1", "repo": REPO,
                                         "lang": "en"}]})
    handler = CommandHandler(Digests(config, SnapshotSource(Snapshot(
        repository=REPO, fetched_at=MERGED_W29, pulls=pulls)), clock=HeldClock(MERGED_W29)))
    reply = await handler.handle(parse_command(text), channel=config.channels[0])
    return render_reply(reply, "text")


async def test_chat_counts_an_area_and_its_week_before_as_the_digest_does() -> None:
    """The digest says "Models (5" and "Models 2 → 5"; chat said 2 PRs, the week
    before 0 (the titles' tags alone)."""
    pulls = _two_weeks()
    area = await _reply_text("what changed in models", pulls)
    assert "Models in 2026-W29: 5 PRs" in area and "The week before: 2." in area, area
    compared = await _reply_text("compare with last week", pulls)
    assert "Models 2 → 5" in compared, compared


async def test_compare_names_an_area_that_fell_to_zero() -> None:
    last = MERGED_W29 - timedelta(days=7)
    pulls = (merged_pull(1, "fix(cli): quote paths", ("cli/a.py",)),
             *(merged_pull(n, f"feat(model): variant {n}", (f"model/m{n}.py",), when=last)
               for n in (7, 8, 9)))
    compared = await _reply_text("compare with last week", pulls)
    assert "Models 3 → 0" in compared, compared


async def test_an_answer_counting_more_than_the_area_gives_no_week_before() -> None:
    """`docs:` PRs outside the Docs area join the answer; the digest's count of last
    week's Docs area measured another set, so it is not said beside them."""
    last = MERGED_W29 - timedelta(days=7)
    pulls = (merged_pull(1, "docs: a guide", ("docs/guide.md",)),
             merged_pull(2, "docs(cli): usage comments", ("cli/usage.py",)),
             merged_pull(3, "docs: older guide", ("docs/old.md",), when=last))
    answer = await _reply_text("what changed in docs", pulls)
    assert "Docs in 2026-W29: 2 PRs" in answer and "The week before" not in answer, answer
