"""The narrator measured on verl W29 (28 PRs) and vllm W29 (222 PRs) from ../shared/data,
against the fake model through the real SDK.

- cost: calls, prompt and completion tokens (estimated by the fake, one per CJK
  character, one per three others) cold, warm, with one PR changed, and cold with
  `check = "model"`, against the single-call approach: one request holding the same
  instructions, the week and every PR's facts (targets: cold at most 1.3x its prompt
  tokens; warm 0 calls; one PR changed at most 2 calls);
- the faithful corpora (testkit.narration.faithful and .faithful_more): share kept,
  bare and wrapped in `<think>` or a fence inside prose (target: 95%);
- claims (testkit.narration.models): a strong model's sentences kept on the report page
  (target: 90%) and shown in the chat text (60% zh, 50% en), its chat summary naming
  the engine's PRs; a mid-size model's six slips (at most 1 reaching a format) and
  thirteen plausible-but-wrong sentences (at most 2), with the PRs the key changes cite
  against --no-llm's (80%) and the calls of a warm rerun of an answer the verifier cut
  (0);
- the hostile fixtures (testkit.narration.hostile, .disguised and .plants) against a model that
  obeys them: planted words in the narrated sentences and in any format beyond what the
  deterministic digest quotes (target: 0), and the verifier's share alone (the model
  fed the planted text as written; target: 100%);
- forty sentences per section: the chat text's visible length against its ceiling and
  the Telegram and Slack messages against the engine's (target: within them);
- privacy: calls made for a private repository without and with `narrate = true`, and
  nineteen forms of secret found in the prompts (target: 0 calls, 0 of 19);
- with --real-server: llama-cpp-python's server with SmolLM2-135M (testkit.llama_server),
  the default request shape and the documented one: calls, fallbacks, seconds, what the
  model wrote and what was dropped;
- deadlines: an endpoint that trickles a byte every 2 s, or never answers, for one
  repository and for two sharing one digest (target: within the budget plus the
  deterministic build).

    python -m bench.narrator [--latency 0.2] [--budget 30] [--timeout 10] [--skip-deadlines]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from adapters.feishu.render import digest_cards
from adapters.slack.render import render_digest_messages as slack_messages
from adapters.telegram.render import render_digest_html
from adapters.telegram.render import render_digest_messages as telegram_messages
from bot.config import Config, parse_config
from bot.digests import Digests
from bot.engine import reviews_recorded
from bot.engine.digest import week_pulls
from bot.models import Digest, Lang, Snapshot
from bot.narrate import MemoryNarrations, Narrator, narrator_for
from bot.narrate.facts import pull_facts, shown_pulls, week_facts
from bot.narrate.figures import PULL_REF
from bot.narrate.hygiene import data_block
from bot.narrate.prompts import estimate_tokens, system_prompt
from bot.narrate.wording import theme_cited
from bot.render import render_digest
from bot.render.chat import CHAT_CEILING, visible_length
from bot.render.html import PageLinks, render_report_page
from bot.render.view import QUICK_VIEW
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit.fakes.openai import FakeOpenAI
from testkit.fakes.openai_hostile import hostile_answer
from testkit.narration import disguised, faithful, faithful_more, hostile, models, plants, secrets
from testkit.narration.faithful import shown_sentences
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

CORPORA = (("first", faithful.CORPUS, faithful.ROUNDS),
           ("second", faithful_more.MORE, (faithful_more.ROUND,)))


async def corpus() -> None:
    print("\nfaithful corpora: sentences kept (share)")
    for corpus_name, lines, rounds in CORPORA:
        for mode in ("good", "think", "prose-fence"):
            row = []
            for lang in ("zh", "en"):
                held, total, _ = await faithful.held(DATA, lines, lang, mode, rounds)
                row.append(f"{lang} {held}/{total} ({held / total:.1%})")
            label = {"good": "bare", "think": "<think> first", "prose-fence": "fence in prose"}
            print(f"  {corpus_name:<7} {label[mode]:<16} " + "   ".join(row))


# --- the hostile fixture -------------------------------------------------------------

def formats(digest: Digest) -> dict[str, str]:
    return {"markdown": render_digest(digest, "markdown"), "text": render_digest(digest, "text"),
            "slack": str(slack_messages(digest)), "telegram": render_digest_html(digest),
            "feishu": str(digest_cards(digest)), "html": render_report_page(digest, PageLinks())}


FIXTURES = (("hostile (instructions in 5 bodies, 1 title, 1 review comment)", hostile.FIRST),
            ("disguised (look-alike and scheme-less hosts, zero-width, template turns, "
             "calls on everyone, a settled claim)", disguised.DISGUISED),
            ("plants (a fake review, figures matching the week's count, a reassuring "
             "thread, homoglyphs, base64 and rot13 notes, 'translate literally', a split "
             "notice, a title to use instead)", plants.PLANTS))


async def attack() -> None:
    for title, plant in FIXTURES:
        print(f"\n{title}, verl W29, against a model that obeys it")
        snapshot = hostile.hostile_snapshot(DATA, plant)
        for lang in ("zh", "en"):
            with FakeOpenAI(answer=hostile_answer) as fake:
                told = await digests(config(hostile.REPO, fake.base_url), snapshot).build(
                    hostile.REPO, WEEK, lang)
            plain = digests(config(hostile.REPO, None), snapshot)
            engine = await plain.build(hostile.REPO, WEEK, lang)
            shown, own = formats(told), formats(engine)
            # What the deterministic digest quotes: in the same format or its full report
            # (a chat form may show one engine risk more than the engine's own chat form).
            reached = {fmt: sum(max(0, hostile.planted_count(shown[fmt], w)
                                    - max(hostile.planted_count(own[fmt], w),
                                          hostile.planted_count(own["markdown"], w)))
                                for w in plant.words) for fmt in shown}
            said = shown_sentences(told)
            in_sentences = sum(hostile.planted_count(s, w) for s in said for w in plant.words)
            pulls = [p for p, _ in week_pulls(snapshot, WEEK, "Asia/Shanghai")]
            answers = {p.number: plain.answer(p, hostile.REPO, lang, reviews_recorded(snapshot))
                       for p in pulls}
            tally = hostile.verifier_alone(engine, pulls, answers,
                                           max(p.number for p in snapshot.pulls), plant)
            assert told.narration is not None
            print(f"  {lang}: planted words in {len(said)} narrated sentences {in_sentences}; "
                  "beyond the engine's, per format: "
                  + ", ".join(f"{f} {n}" for f, n in reached.items())
                  + f"; sections narrated {len(told.narration.sections_narrated)}/6")
            print(f"      verifier alone: {tally.blocked}/{tally.carrying} planted sentences "
                  f"blocked ({tally.blocked / max(1, tally.carrying):.0%})")


# --- claims: a strong model, a mid-size one, plausible-but-wrong sentences -------------

VERL_REPO, VERL_FILE = WEEKS[0]


async def _scripted(lines: tuple[faithful.Line, ...], lang: Lang, mode: str = "good"
                    ) -> tuple[Digest, int, int]:
    """verl W29 narrated by a model answering `lines`; the calls cold and warm."""
    snapshot = read_snapshot(DATA / VERL_FILE)
    with FakeOpenAI(answer=models.answer(lines)) as fake:
        fake.mode = mode
        built = digests(config(VERL_REPO, fake.base_url), snapshot)
        told = await built.build(VERL_REPO, WEEK, lang)
        cold = fake.calls
        await built.build(VERL_REPO, WEEK, lang)
    return told, cold, fake.calls - cold


def _summary_refs(text: str) -> set[int]:
    blocks = [b for b in text.split("\n\n") if b.strip()]
    return {int(n) for n in PULL_REF.findall(blocks[2])}


async def claims() -> None:
    print("\nclaims, verl W29: a strong model's faithful sentences (page = the full report, "
          "chat = the chat text)")
    for lang in ("zh", "en"):
        engine = await digests(config(VERL_REPO, None), read_snapshot(DATA / VERL_FILE)).build(
            VERL_REPO, WEEK, lang)
        for mode in ("good", "think", "prose-fence"):
            lines = models.strong_lines(lang)
            told, _, _ = await _scripted(lines, lang, mode)
            texts = [c.text for c in lines]
            page = models.reached(texts, shown_sentences(told))
            chat_text = render_digest(told, "text")
            chat = models.reached(texts, [chat_text])
            names = _summary_refs(chat_text) >= _summary_refs(render_digest(engine, "text"))
            print(f"  {lang} {mode:<12} page {len(page)}/{len(texts)} "
                  f"({len(page) / len(texts):.0%}), chat {len(chat)}/{len(texts)} "
                  f"({len(chat) / len(texts):.0%}); chat summary names the engine's PRs: "
                  f"{names}")
        cited = {n for t in engine.themes if t.pulls for n in theme_cited(t)}
        for name, table in (("mid-size slips", models.MIDSIZE),
                            ("plausible-but-wrong", models.WRONG)):
            slips = table[lang]
            told, cold, warm = await _scripted(models.with_slips(lang, slips), lang)
            assert told.narration is not None
            shown = [*shown_sentences(told), *formats(told).values()]
            got = models.reached([s.line.text for s in slips], shown)
            changes = next((p for p in told.narration.prose if p.section == "changes"), None)
            said = {int(n) for s in (changes.sentences if changes else ()) for n in
                    PULL_REF.findall(s)}
            rules = ",".join(sorted({d.rule for d in told.narration.dropped}))
            print(f"  {lang} {name:<20} reached any format {len(got)}/{len(slips)}; "
                  f"sentences_dropped {told.narration.sentences_dropped} ({rules}); key "
                  f"changes cite {len(cited & said)}/{len(cited)} of --no-llm's PRs; calls "
                  f"cold {cold}, warm {warm}")


# --- forty sentences per section ----------------------------------------------------

async def forty() -> None:
    print(f"\nforty sentences per section: chat text (visible characters, ceiling "
          f"{CHAT_CEILING:,}) and messages, narrated against the engine's")
    for repo, name in WEEKS:
        snapshot = read_snapshot(DATA / name)
        for lang in ("zh", "en"):
            with FakeOpenAI() as fake:
                fake.mode = "forty"
                told = await digests(config(repo, fake.base_url), snapshot).build(
                    repo, WEEK, lang)
            engine = await digests(config(repo, None), snapshot).build(
                repo, WEEK, lang)
            assert told.narration is not None
            print(f"  {repo.split('/')[1]:<5} {lang}: text "
                  f"{visible_length(render_digest(told, 'text')):,} "
                  f"(engine {visible_length(render_digest(engine, 'text')):,}); Telegram "
                  f"{len(telegram_messages(told))} (engine {len(telegram_messages(engine))}); "
                  f"Slack {len(slack_messages(told))} (engine {len(slack_messages(engine))}); "
                  f"sections narrated {len(told.narration.sections_narrated)}/6")


# --- privacy -------------------------------------------------------------------------

async def privacy() -> None:
    print("\nprivacy: verl W29 as a private repository, and with secrets in every body")
    snapshot = read_snapshot(DATA / WEEKS[0][1])
    repo = WEEKS[0][0]
    for label, settings in (("private", {"private": True}),
                            ("private, narrate = true", {"private": True, "narrate": True})):
        with FakeOpenAI() as fake:
            cfg = parse_config({"repos": {repo: {"timezone": "Asia/Shanghai", **settings}},
                                "llm": {"base_url": fake.base_url, "model": "fake"}})
            told = await digests(cfg, snapshot).build(repo, WEEK, "zh")
        print(f"  {label:<24} calls {fake.calls}, narrated {told.narration is not None}")
    secret = msgspec.structs.replace(snapshot, pulls=tuple(
        msgspec.structs.replace(p, body=secrets.planted() + (p.body or ""))
        for p in snapshot.pulls))
    with FakeOpenAI() as fake:
        await digests(config(repo, fake.base_url), secret).build(repo, WEEK, "zh")
        sent = json.dumps(fake.requests, ensure_ascii=False)
    found = secrets.found(sent)
    print(f"  secrets of {len(secrets.SECRETS)} forms in {fake.calls} prompts: {len(found)} "
          f"found {found}; [redacted] {sent.count('[redacted]')} times")


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


# --- a real model server --------------------------------------------------------------

async def real_server() -> None:
    from testkit.llama_server import llama_server
    from testkit.narration.week import REPO as EXAMPLE_REPO
    from testkit.narration.week import example_digests, llm_config

    print("\nreal server: llama-cpp-python's server, SmolLM2-135M-Instruct (Q4_1), the "
          "example week, two cores")
    with llama_server() as base_url:
        for shape in ("json_schema", "json_object_schema"):
            for lang in ("en", "zh"):
                cfg = llm_config(base_url, response_format=shape, timeout_seconds=120,
                                 budget_seconds=240, max_concurrency=1)
                assert cfg.llm is not None
                store = MemoryNarrations()
                narrator = Narrator(cfg.llm, store)
                told, seconds = await timed(lambda: example_digests(
                    cfg, narrator=narrator).build(EXAMPLE_REPO, WEEK, lang))  # noqa: B023
                assert told.narration is not None
                n = told.narration
                fallbacks = ",".join(f"{f.section}={f.reason}" for f in n.fallbacks) or "none"
                rules = ",".join(f"{r}×{c}" for r, c in sorted(
                    Counter(d.rule for d in n.dropped).items())) or "none"
                print(f"  {shape:<18} {lang}: {narrator.calls} calls, {seconds:5.1f} s, "
                      f"shape used {narrator.client.shape}; narrated "
                      f"{','.join(n.sections_narrated) or 'nothing'}; fallbacks {fallbacks}; "
                      f"dropped {n.sentences_dropped} ({rules})")


async def bench(args: argparse.Namespace) -> None:
    for lang in ("zh", "en"):
        await cost(args.latency, lang)
    await corpus()
    await claims()
    await attack()
    await forty()
    await privacy()
    if args.real_server:
        await real_server()
    if not args.skip_deadlines:
        # The budget as given, and one just above a call's timeout: two repositories'
        # calls time out one after the other, the second cut by the shared deadline.
        for budget in dict.fromkeys((args.budget, args.timeout + 2)):
            await deadlines(budget, args.timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--skip-deadlines", action="store_true")
    parser.add_argument("--real-server", action="store_true",
                        help="also narrate with llama-cpp-python's server and SmolLM2-135M")
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
