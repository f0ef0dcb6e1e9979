"""One deadline per digest: an endpoint that trickles its answer a byte every 2 s, or
never answers, costs a digest at most `budget_seconds` beyond the deterministic build,
and a digest of two repositories shares that one budget."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import msgspec
import pytest

from bot.config import parse_config
from bot.digests import Digests
from bot.models import Digest
from bot.narrate import MemoryNarrations, narrator_for
from bot.source import SnapshotSource
from testkit.fakes.openai import FakeOpenAI
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


@pytest.mark.parametrize("mode", ["trickle", "hang"])
async def test_two_repositories_share_one_budget(mode: str) -> None:
    source = SnapshotSource(example_snapshot(), prism_snapshot())
    plain = two_repo_config()
    _, build = await _timed(lambda: Digests(plain, source).build_many((LUMEN, PRISM), WEEK, "zh"))
    with FakeOpenAI(trickle_seconds=2.0) as fake:
        fake.mode = mode
        config = msgspec.structs.replace(plain, llm=parse_config({"llm": {
            "base_url": fake.base_url, "model": "fake-model", "timeout_seconds": TIMEOUT,
            "budget_seconds": BUDGET}}).llm)
        narrator = narrator_for(config, MemoryNarrations())
        digests = Digests(config, source, narrator=narrator)
        told, spent = await _timed(lambda: digests.build_many((LUMEN, PRISM), WEEK, "zh"))
    assert spent <= BUDGET + build + SLACK, (spent, build)
    assert all(p.narration is not None and p.narration.sections_narrated == ()
               for p in told.parts)


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
