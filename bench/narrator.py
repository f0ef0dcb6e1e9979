"""The narrator measured on verl W29 (28 PRs) and vllm W29 (222 PRs) from ../shared/data,
against the fake model through the real SDK.

- cost: calls, prompt and completion tokens (estimated by the fake, one per CJK
  character, one per three others) cold, warm, with one PR changed, and cold with
  `check = "model"`, against the single-call approach: one request holding the same
  instructions, the week and every PR's facts (targets: cold at most 1.3x its prompt
  tokens; warm 0 calls; one PR changed at most 2 calls);
- the faithful corpus (testkit.narration.faithful): share kept, bare and wrapped in
  `<think>` or a fence inside prose (target: 95%);
- the hostile fixture (testkit.narration.hostile) against a model that obeys it:
  planted words reaching any format beyond what the deterministic digest quotes
  (target: 0), and the verifier's share alone (the model fed the planted text as
  written);
- deadlines: an endpoint that trickles a byte every 2 s, or never answers, for one
  repository and for two sharing one digest (target: within the budget plus the
  deterministic build).

    python -m bench.narrator [--latency 0.2] [--budget 30] [--timeout 10] [--skip-deadlines]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from adapters.feishu.render import digest_cards
from adapters.slack.render import render_digest_messages as slack_messages
from adapters.telegram.render import render_digest_html
from bot.config import Config, parse_config
from bot.digests import Digests
from bot.engine import reviews_recorded
from bot.engine.digest import week_pulls
from bot.models import Digest, Lang, Snapshot
from bot.narrate import MemoryNarrations, narrator_for
from bot.narrate.facts import pull_facts, shown_pulls, week_facts
from bot.narrate.hygiene import data_block
from bot.narrate.prompts import estimate_tokens, system_prompt
from bot.render import render_digest
from bot.render.html import PageLinks, render_report_page
from bot.render.view import QUICK_VIEW
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit.fakes.openai import FakeOpenAI
from testkit.fakes.openai_hostile import hostile_answer
from testkit.narration import faithful, hostile
from testkit.shared_data import shared_data_dir

DATA = shared_data_dir()
WEEKS = (("verl-project/verl", "verl-2026-07.json"), ("vllm-project/vllm", "vllm-2026-W29.json"))
WEEK = "2026-W29"


def config(repo: str, base_url: str | None, **llm: Any) -> Config:
    data: dict[str, Any] = {"repos": {repo: {"timezone": "Asia/Shanghai"}}}
    if base_url is not None:
        data["llm"] = {"base_url": base_url, "model": "fake", "timeout_seconds": 30,
                       "budget_seconds": 600, "max_concurrency": 8, **llm}
    return parse_config(data)


def digests(cfg: Config, *snapshots: Snapshot) -> Digests:
    return Digests(cfg, SnapshotSource(*snapshots), narrator=narrator_for(cfg, MemoryNarrations()))


async def timed(build: Callable[[], Awaitable[Digest]]) -> tuple[Digest, float]:
    started = time.perf_counter()
    digest = await build()
    return digest, time.perf_counter() - started


# --- cost ------------------------------------------------------------------------------

async def single_call(snapshot: Snapshot, repo: str, lang: Lang) -> int:
    """Prompt tokens of one request with the same instructions, the week's facts and
    every PR's facts, as the narrator would clean them."""
    plain = digests(config(repo, None), snapshot)
    digest = await plain.build(repo, WEEK, lang)
    pulls = [p for p, _ in week_pulls(snapshot, WEEK, "Asia/Shanghai")]
    recorded = reviews_recorded(snapshot)
    facts = [pull_facts(p, plain.answer(p, repo, lang, recorded)) for p in pulls]
    week = week_facts(digest, shown_pulls(digest, QUICK_VIEW), frozenset())
    body = data_block("week", week) + "\n" + data_block("pulls", {"pulls": facts})
    return estimate_tokens(system_prompt(lang)) + estimate_tokens(body) + 8


async def run(fake: FakeOpenAI, built: Digests, repo: str, lang: Lang) -> dict[str, Any]:
    fake.requests.clear()
    fake.prompt_tokens = fake.completion_tokens = 0
    digest, seconds = await timed(lambda: built.build(repo, WEEK, lang))
    assert digest.narration is not None
    return {"calls": fake.calls, "prompt": fake.prompt_tokens,
            "completion": fake.completion_tokens, "seconds": seconds,
            "narrated": len(digest.narration.sections_narrated)}


async def cost(latency: float, lang: Lang) -> None:
    print(f"cost: fake model, {latency * 1000:.0f} ms per call, lang={lang}")
    print(f"{'week':<16} {'run':<20} {'calls':>5} {'prompt':>8} {'compl.':>7} "
          f"{'x single':>8} {'wall s':>6} {'sections':>8}")
    with FakeOpenAI(latency=latency) as fake:
        for repo, name in WEEKS:
            snapshot = read_snapshot(DATA / name)
            single = await single_call(snapshot, repo, lang)
            size = len(week_pulls(snapshot, WEEK, "Asia/Shanghai"))
            label = f"{repo.split('/')[1]} ({size} PRs)"
            built = digests(config(repo, fake.base_url), snapshot)
            rows = [("cold", await run(fake, built, repo, lang)),
                    ("warm", await run(fake, built, repo, lang))]
            first = (await built.build(repo, WEEK, lang)).key_pulls[0].number
            source = built.source
            assert isinstance(source, SnapshotSource)
            source.snapshot = msgspec.structs.replace(snapshot, pulls=tuple(
                msgspec.structs.replace(p, additions=(p.additions or 0) + 1)
                if p.number == first else p for p in snapshot.pulls))
            rows.append(("one PR changed", await run(fake, built, repo, lang)))
            checked = digests(config(repo, fake.base_url, check="model"), snapshot)
            rows.append(('cold, check="model"', await run(fake, checked, repo, lang)))
            for run_name, r in rows:
                print(f"{label:<16} {run_name:<20} {r['calls']:>5} {r['prompt']:>8,} "
                      f"{r['completion']:>7,} {r['prompt'] / single:>8.2f} "
                      f"{r['seconds']:>6.2f} {r['narrated']:>8}")
            print(f"{label:<16} {'single call (est.)':<20} {1:>5} {single:>8,}")


# --- the faithful corpus -------------------------------------------------------------

async def corpus() -> None:
    print("\nfaithful corpus: sentences kept (share)")
    for mode in ("good", "think", "prose-fence"):
        row = []
        for lang in ("zh", "en"):
            held = total = 0
            for round_ in faithful.ROUNDS:
                with FakeOpenAI(answer=faithful.corpus_answer(round=round_)) as fake:
                    fake.mode = mode
                    for repo, name in WEEKS:
                        built = digests(config(repo, fake.base_url), read_snapshot(DATA / name))
                        digest = await built.build(repo, WEEK, lang)  # type: ignore[arg-type]
                        yes, no = faithful.kept(digest, faithful.CORPUS, round_)
                        held, total = held + len(yes), total + len(yes) + len(no)
            row.append(f"{lang} {held}/{total} ({held / total:.1%})")
        label = {"good": "bare", "think": "<think> first", "prose-fence": "fence in prose"}
        print(f"  {label[mode]:<16} " + "   ".join(row))


# --- the hostile fixture -------------------------------------------------------------

def formats(digest: Digest) -> dict[str, str]:
    return {"markdown": render_digest(digest, "markdown"), "text": render_digest(digest, "text"),
            "slack": str(slack_messages(digest)), "telegram": render_digest_html(digest),
            "feishu": str(digest_cards(digest)), "html": render_report_page(digest, PageLinks())}


async def attack() -> None:
    print("\nhostile fixture (verl W29, instructions in 5 bodies, 1 title, 1 review comment)")
    snapshot = hostile.hostile_snapshot(DATA)
    for lang in ("zh", "en"):
        with FakeOpenAI(answer=hostile_answer) as fake:
            told = await digests(config(hostile.REPO, fake.base_url), snapshot).build(
                hostile.REPO, WEEK, lang)  # type: ignore[arg-type]
        plain = digests(config(hostile.REPO, None), snapshot)
        engine = await plain.build(hostile.REPO, WEEK, lang)  # type: ignore[arg-type]
        shown, own = formats(told), formats(engine)
        reached = {fmt: sum(max(0, hostile.planted_count(shown[fmt], w)
                                - hostile.planted_count(own[fmt], w)) for w in hostile.PLANTED)
                   for fmt in shown}
        pulls = [p for p, _ in week_pulls(snapshot, WEEK, "Asia/Shanghai")]
        answers = {p.number: plain.answer(p, hostile.REPO, lang, reviews_recorded(snapshot))
                   for p in pulls}
        tally = hostile.verifier_alone(engine, pulls, answers,
                                       max(p.number for p in snapshot.pulls))
        assert told.narration is not None
        print(f"  {lang}: planted words beyond the engine's, per format: "
              + ", ".join(f"{f} {n}" for f, n in reached.items())
              + f"; sections narrated {len(told.narration.sections_narrated)}/6")
        print(f"      verifier alone: {tally.blocked}/{tally.carrying} planted sentences "
              f"blocked ({tally.blocked / max(1, tally.carrying):.0%})")


# --- deadlines -----------------------------------------------------------------------

async def deadlines(budget: float, timeout: float) -> None:
    print(f"\ndeadlines: budget {budget:g} s, timeout {timeout:g} s per call; verl W29, "
          "and verl + vllm in one digest")
    verl, vllm = (read_snapshot(DATA / name) for _, name in WEEKS)
    repos = tuple(repo for repo, _ in WEEKS)
    both = parse_config({"repos": {r: {"timezone": "Asia/Shanghai"} for r in repos}})
    _, one_build = await timed(lambda: digests(config(repos[0], None), verl).build(
        repos[0], WEEK, "zh"))
    _, two_build = await timed(lambda: Digests(both, SnapshotSource(verl, vllm)).build_many(
        repos, WEEK, "zh"))
    for mode in ("trickle", "hang"):
        with FakeOpenAI(trickle_seconds=2.0) as fake:
            fake.mode = mode
            llm = {"timeout_seconds": timeout, "budget_seconds": budget}
            one = digests(config(repos[0], fake.base_url, **llm), verl)
            _, single = await timed(lambda: one.build(repos[0], WEEK, "zh"))  # noqa: B023
            two = digests(msgspec.structs.replace(both, llm=one.config.llm), verl, vllm)
            _, pair = await timed(lambda: two.build_many(repos, WEEK, "zh"))  # noqa: B023
        print(f"  {mode:<8} one repository {single:6.1f} s (build {one_build:.1f} s); "
              f"two {pair:6.1f} s (builds {two_build:.1f} s)")


async def bench(args: argparse.Namespace) -> None:
    for lang in ("zh", "en"):
        await cost(args.latency, lang)  # type: ignore[arg-type]
    await corpus()
    await attack()
    if not args.skip_deadlines:
        await deadlines(args.budget, args.timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--skip-deadlines", action="store_true")
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
