"""A pattern that backtracks for ever in Python's `re` (`(a+)+$`) as a repository's
`exclude.titles`, and a merged PR whose 40-character title is its worst case: the
merge webhook and a digest of its week run while `/healthz` is probed all along on the
same event loop. Shared by the reliability tests and `bench/faults.py`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import msgspec

from bot.models import PullRequest
from testkit.reliability.harness import service_in_process
from testkit.reliability.hostile import example_pulls
from testkit.reliability.names import REPO, WEEK
from testkit.reliability.world import world
from testkit.server_support import merged_event

BACKTRACKING = "(a+)+$"
WORST_TITLE = "a" * 39 + "!"
"""40 characters: Python's `re` tries about 2^39 ways to match the run of `a`s."""
EXCLUDE = f'\n[repos."{REPO}".exclude]\ntitles = [\'{BACKTRACKING}\']\n'
PROBE_EVERY_SECONDS = 0.02


@dataclass
class PatternOutcome:
    webhook_status: int = 0
    notified: int = 0
    webhook_seconds: float = 0.0
    digest_seconds: float = 0.0
    digest_pulls: int = 0
    probes: list[float] = field(default_factory=list)
    probe_failures: int = 0

    @property
    def slowest_probe(self) -> float:
        return max(self.probes, default=0.0)


def worst_title_pull(number: int = 1298, title: str = WORST_TITLE) -> PullRequest:
    """A merged NPU PR of the example week with the pattern's worst-case title."""
    template = next(p for p in example_pulls(hostile=False) if p.state == "merged")
    at = datetime(2026, 7, 16, 7, 0, tzinfo=UTC)
    return msgspec.structs.replace(
        template, number=number, title=title, url=f"https://github.com/{REPO}/pull/{number}",
        body="Moves the npu kernels behind one switch.", created_at=at - timedelta(days=1),
        updated_at=at, merged_at=at, closed_at=at, state="merged")


async def _probe(get: Callable[[str], Awaitable[httpx.Response]], outcome: PatternOutcome,
                 stop: asyncio.Event) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        answer = await get("/healthz")
        outcome.probes.append(time.perf_counter() - started)
        if answer.status_code != 200:
            outcome.probe_failures += 1
        await asyncio.sleep(PROBE_EVERY_SECONDS)


async def pattern_under_load(redis_url: str, workdir: Path) -> PatternOutcome:
    """The webhook and the week's digest with `/healthz` probed meanwhile."""
    outcome = PatternOutcome()
    pull = worst_title_pull()
    # A merge before the measured one: the first notice of a process compiles the
    # templates (a one-off cost of its own), so the probes see the pattern's cost only.
    warm = worst_title_pull(1297, "[npu] feat: one switch for the kernels")
    with world(pulls=[*example_pulls(), warm, pull]) as fakes:
        async with service_in_process(fakes, redis_url, workdir, extra=EXCLUDE) as service:
            await service.github(merged_event(warm, REPO))
            stop = asyncio.Event()
            probing = asyncio.ensure_future(_probe(service.http.get, outcome, stop))
            await asyncio.sleep(PROBE_EVERY_SECONDS * 3)
            started = time.perf_counter()
            answer = await service.github(merged_event(pull, REPO))
            outcome.webhook_seconds = time.perf_counter() - started
            outcome.webhook_status = answer.status_code
            if answer.status_code == 200:
                outcome.notified = len(answer.json().get("notified", []))
            started = time.perf_counter()
            digest = await service.services.process.digests.build(REPO, WEEK, "en")
            outcome.digest_seconds = time.perf_counter() - started
            outcome.digest_pulls = digest.counts.total
            stop.set()
            await probing
    return outcome
