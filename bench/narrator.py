"""Narrator cost: calls, prompt/completion tokens and wall time for verl W29 (28 PRs) and
vllm W29 (222 PRs) from ../shared/data, against the fake model with a delay per call:
cold (empty cache), warm (target: 0 calls), one PR changed (target: 2 calls), and a
naive baseline that sends the whole week in one prompt on every render.

    python -m bench.narrator [--latency 0.2] [--lang zh]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

import msgspec

from bot.config import Config, parse_config
from bot.digests import Digests
from bot.engine.digest import week_pulls
from bot.narrate import MemoryNarrations, Narrator
from bot.narrate.hygiene import data_block
from bot.narrate.prompts import estimate_tokens, system_prompt
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit.fakes.openai import FakeOpenAI

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
WEEKS = (("verl-project/verl", "verl-2026-07.json"), ("vllm-project/vllm", "vllm-2026-W29.json"))
WEEK = "2026-W29"
RENDERS = 3
"""Renders of the same week the naive baseline pays for (chat, schedule, report page)."""


def config(repo: str, base_url: str) -> Config:
    return parse_config({"repos": {repo: {"timezone": "Asia/Shanghai"}},
                         "llm": {"base_url": base_url, "model": "fake", "timeout_s": 30,
                                 "budget_s": 600, "max_concurrency": 8}})


async def run(fake: FakeOpenAI, digests: Digests, repo: str, lang: Any) -> dict[str, Any]:
    fake.requests.clear()
    fake.prompt_tokens = fake.completion_tokens = 0
    started = time.perf_counter()
    digest = await digests.build(repo, WEEK, lang)
    assert digest.narration is not None
    return {"calls": fake.calls, "prompt": fake.prompt_tokens,
            "completion": fake.completion_tokens, "seconds": time.perf_counter() - started,
            "narrated": len(digest.narration.sections_narrated)}


def naive(snapshot: Any, lang: Any, latency: float) -> dict[str, Any]:
    """One prompt holding the whole week (every PR's title and body), per render."""
    pulls = [{"number": p.number, "title": p.title, "body": p.body or ""}
             for p in snapshot.pulls]
    prompt = estimate_tokens(system_prompt(lang) + data_block("week", pulls))
    return {"calls": RENDERS, "prompt": prompt * RENDERS, "completion": 1500 * RENDERS,
            "seconds": latency * RENDERS, "narrated": 6}


async def bench(latency: float, lang: Any) -> None:
    rows: list[tuple[str, str, dict[str, Any]]] = []
    with FakeOpenAI(latency=latency) as fake:
        for repo, name in WEEKS:
            snapshot = read_snapshot(DATA / name)
            cfg = config(repo, fake.base_url)
            store = MemoryNarrations()
            source = SnapshotSource(snapshot)
            assert cfg.llm is not None
            digests = Digests(cfg, source, narrator=Narrator(cfg.llm, store))
            size = len(week_pulls(snapshot, WEEK, "Asia/Shanghai"))
            label = f"{repo.split('/')[1]} ({size} PRs)"
            rows.append((label, "cold", await run(fake, digests, repo, lang)))
            rows.append((label, "warm", await run(fake, digests, repo, lang)))
            first = next(p for p, _ in week_pulls(snapshot, WEEK, "Asia/Shanghai"))
            source.snapshot = msgspec.structs.replace(snapshot, pulls=tuple(
                msgspec.structs.replace(p, additions=(p.additions or 0) + 1)
                if p.number == first.number else p for p in snapshot.pulls))
            rows.append((label, "one PR changed", await run(fake, digests, repo, lang)))
            rows.append((label, f"naive x{RENDERS} renders", naive(snapshot, lang, latency)))
    print(f"narrator bench: fake model, {latency * 1000:.0f} ms per call, lang={lang}")
    print(f"{'week':<16} {'run':<18} {'calls':>6} {'prompt tok':>11} {'compl. tok':>11} "
          f"{'wall s':>7} {'sections':>8}")
    for label, run_name, r in rows:
        print(f"{label:<16} {run_name:<18} {r['calls']:>6} {r['prompt']:>11,} "
              f"{r['completion']:>11,} {r['seconds']:>7.2f} {r['narrated']:>8}")
    print("naive: one prompt of the whole week (titles and bodies) per render, tokens "
          "estimated, no cache")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--lang", default="zh", choices=("zh", "en"))
    args = parser.parse_args()
    asyncio.run(bench(args.latency, args.lang))


if __name__ == "__main__":
    main()
