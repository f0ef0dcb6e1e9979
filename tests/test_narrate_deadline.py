"""One deadline per digest: an endpoint that trickles its answer a byte every 2 s, or
never answers, costs a digest at most `budget_seconds` beyond the deterministic build
(real seconds: the bound on a call in flight is real time), and a digest of two
repositories shares that one budget (on a virtual clock)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from bot.config import parse_config
from bot.digests import Digests
from bot.models import Digest
from bot.narrate import MemoryNarrations, narrator_for
from bot.source import SnapshotSource
from testkit.clock import VirtualClock
from testkit.fakes.openai import FakeOpenAI, write_answer
from testkit.multi_repo import LUMEN, PRISM, prism_snapshot, two_repo_config
from testkit.narration.week import REPO, WEEK, example_digests, llm_config, plain_config
from testkit.server_support import example_snapshot

TIMEOUT = 3.0
BUDGET = 4.0
SLACK = 2.0
"""A loaded machine's margin on top of the budget and the build."""


async def _timed(build: Callable[[], Awaitable[Digest]]) -> tuple[Digest, float]:
    started = time.monotonic()
    digest = await build()
    return digest, time.monotonic() - started


@pytest.mark.parametrize("mode", ["trickle", "hang"])
async def test_a_slow_endpoint_costs_at_most_the_budget(mode: str) -> None:
    _, build = await _timed(lambda: example_digests(plain_config()).build(REPO, WEEK, "zh"))
    with FakeOpenAI(trickle_seconds=2.0) as fake:
        fake.mode = mode
        config = llm_config(fake.base_url, timeout_seconds=TIMEOUT, budget_seconds=BUDGET)
        told, spent = await _timed(lambda: example_digests(config).build(REPO, WEEK, "zh"))
    assert spent <= BUDGET + build + SLACK, (spent, build)
    assert told.narration is not None and told.narration.sections_narrated == ()
    assert {f.reason for f in told.narration.fallbacks} <= {"timeout", "budget"}


async def test_two_repositories_share_one_budget() -> None:
    """The second repository's deadline is the first's: the model answers the first
    repository's two calls in half the budget each (on a virtual clock, moved by the
    fake as it answers), and the second is told by the engine, asking nothing."""
    source = SnapshotSource(example_snapshot(), prism_snapshot())
    plain = two_repo_config()
    clock = VirtualClock()

    def answer_in_half_the_budget(blocks: dict[str, Any], lang: str) -> dict[str, Any]:
        clock.advance(BUDGET / 2)
        return write_answer(blocks, lang)

    with FakeOpenAI(answer=answer_in_half_the_budget) as fake:
        config = msgspec.structs.replace(plain, llm=parse_config({"llm": {
            "base_url": fake.base_url, "model": "fake-model", "timeout_seconds": TIMEOUT,
            "budget_seconds": BUDGET}}).llm)
        narrator = narrator_for(config, MemoryNarrations(), clock=clock)
        digests = Digests(config, source, narrator=narrator)
        started = clock.monotonic()
        told = await digests.build_many((LUMEN, PRISM), WEEK, "zh")
    first, second = told.parts
    assert first.repository == LUMEN and second.repository == PRISM
    assert first.narration is not None and first.narration.sections_narrated != ()
    assert fake.calls == 2 and clock.monotonic() - started == BUDGET
    assert second.narration is not None and second.narration.sections_narrated == ()
    assert {f.reason for f in second.narration.fallbacks} == {"budget"}


async def test_a_repository_after_the_budget_is_spent_asks_nothing() -> None:
    """The second repository of a digest whose first used the whole budget is told by
    the engine at once: no call started, none counted, every section says why."""
    with FakeOpenAI(trickle_seconds=2.0) as fake:
        fake.mode = "hang"
        config = llm_config(fake.base_url, timeout_seconds=TIMEOUT, budget_seconds=BUDGET)
        narrator = narrator_for(config, MemoryNarrations())
        assert narrator is not None
        digests = example_digests(config, narrator=narrator)
        engine = await example_digests(plain_config()).build(REPO, WEEK, "zh")
        budget = narrator.budget()
        budget.seconds = 0.0
        assert budget.deadline <= time.monotonic() and budget.spent
        snapshot = example_snapshot()
        told = await narrator.narrate(engine, snapshot.pulls, {
            p.number: digests.answer_for(p, REPO, "zh") for p in snapshot.pulls},
            budget=budget)
    assert fake.calls == 0 and narrator.calls == 0
    assert told.narration is not None and told.narration.sections_narrated == ()
    assert {f.reason for f in told.narration.fallbacks} == {"budget"}
    assert {f.section for f in told.narration.fallbacks} == {
        "summary", "changes", "trends", "risks", "key_prs", "suggestions"}
