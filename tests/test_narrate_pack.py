"""The fact pack and the calls it takes: theme counts hold every PR of the theme, the
period's last day is the week's last, the unknowns are stated; only the PRs the digest
shows are asked about, in one call, beside one for the week; a rerun asks nothing and
one changed PR at most two; the optional second pass costs one call and drops what the
model does not support."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bot.narrate.client import BACKOFF_S, RETRIES
from bot.narrate.hygiene import read_blocks
from bot.narrate.wording import engine_summary
from bot.render import render_digest
from bot.render.view import QUICK_VIEW
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit.clock import VirtualClock
from testkit.fakes.openai import FakeOpenAI, write_answer
from testkit.narration.week import (
    REPO,
    WEEK,
    example_digests,
    llm_config,
    snapshot_digests,
    week_config,
)

VERL = "verl-project/verl"


def _blocks(fake: FakeOpenAI, name: str) -> list[Any]:
    return [data for r in fake.requests
            for label, data in read_blocks(r["messages"][-1]["content"]).items()
            if label == name]


@pytest.mark.realdata
@pytest.mark.parametrize(("repo", "name"), [(VERL, "verl-2026-07.json"),
                                            ("vllm-project/vllm", "vllm-2026-W29.json")])
async def test_the_week_is_told_whole(shared_data: Path, repo: str, name: str) -> None:
    with FakeOpenAI() as fake:
        digest = await snapshot_digests(week_config(repo, fake.base_url),
                                        read_snapshot(shared_data / name)).build(
            repo, WEEK, "zh")
        week = _blocks(fake, "week")[0]
        asked = {p["number"] for block in _blocks(fake, "pulls") for p in block["pulls"]}
    counts = {t["key"]: t["count"] for t in week["themes"]}
    assert counts == {t.key: len(t.pulls) + len(t.others) for t in digest.themes}
    assert 0 not in counts.values()
    assert (week["first_day"], week["last_day"]) == ("2026-07-13", "2026-07-19")
    assert week["unknown"] == [n for n in digest.notes]
    assert any("检查状态未知" in n for n in week["unknown"])
    shown = {k.number for k in digest.key_pulls[:QUICK_VIEW]} | {r.pull for r in digest.risks}
    assert asked == shown
    assert fake.calls == 2


@pytest.mark.realdata
async def test_a_rerun_asks_nothing_and_one_changed_pr_at_most_two(shared_data: Path) -> None:
    snapshot = read_snapshot(shared_data / "verl-2026-07.json")
    with FakeOpenAI() as fake:
        digests = snapshot_digests(week_config(VERL, fake.base_url), snapshot)
        first = await digests.build(VERL, WEEK, "zh")
        cold = fake.calls
        await digests.build(VERL, WEEK, "zh")
        assert fake.calls == cold == 2
        changed = first.key_pulls[0].number
        source = digests.source
        assert isinstance(source, SnapshotSource)
        source.snapshot = msgspec.structs.replace(snapshot, pulls=tuple(
            msgspec.structs.replace(p, additions=(p.additions or 0) + 1)
            if p.number == changed else p for p in snapshot.pulls))
        await digests.build(VERL, WEEK, "zh")
        assert cold < fake.calls <= cold + 2
        assert [p["number"] for b in _blocks(fake, "pulls")[1:] for p in b["pulls"]] == \
            [changed]


def _doubting(marker: str) -> Any:
    """A model that writes well and, asked to check, says no to sentences with `marker`."""
    def answer(blocks: dict[str, Any], lang: str) -> dict[str, Any]:
        if "check" in blocks:
            return {"verdicts": [{"id": s["id"], "supported": marker not in s["text"]}
                                 for s in blocks["check"]["sentences"]]}
        return write_answer(blocks, lang)
    return answer


async def test_the_second_pass_drops_what_the_model_does_not_support() -> None:
    with FakeOpenAI() as fake:
        plain = await example_digests(llm_config(fake.base_url)).build(REPO, WEEK, "zh")
        rules_calls = fake.calls
    with FakeOpenAI(answer=_doubting("工作最集中")) as fake:
        told = await example_digests(llm_config(fake.base_url, check="model")).build(
            REPO, WEEK, "zh")
        checked = _blocks(fake, "check")
        assert fake.calls == rules_calls + 1
    assert told.narration is not None and plain.narration is not None
    summary = next(p.sentences for p in told.narration.prose if p.section == "summary")
    before = next(p.sentences for p in plain.narration.prose if p.section == "summary")
    assert any("工作最集中" in s for s in before)
    assert not any("工作最集中" in s for s in summary)
    sentences = [s["text"] for block in checked for s in block["sentences"]]
    assert any("工作最集中" in s for s in sentences) and "pulls" in checked[0]


async def test_a_failed_second_pass_leaves_the_rules_verdicts() -> None:
    with FakeOpenAI() as fake:
        fake.queue = ["good", "good", "500", "500", "500"]
        clock = VirtualClock()  # the check's retries wait on it: no wall time
        told = await example_digests(llm_config(fake.base_url, check="model"),
                                     clock=clock).build(REPO, WEEK, "zh")
        assert any("check" in json.dumps(r) for r in fake.requests[2:])
        assert clock.slept == [BACKOFF_S * 2.0**n for n in range(RETRIES)]
    assert told.narration is not None and told.narration.fallbacks == ()


def _losing(blocks: dict[str, Any], lang: str) -> dict[str, Any]:
    """A model whose count sentence states a wrong figure and that skips one theme."""
    answer = write_answer(blocks, lang)
    if "week" in blocks:
        answer["summary"][0]["text"] = answer["summary"][0]["text"].replace(
            str(blocks["week"]["total"]), "977")
        answer["summary"] = [s for s in answer["summary"] if "风险" not in s["text"]]
        answer["changes"] = answer["changes"][1:]
    return answer


async def test_a_section_loses_no_content_when_sentences_are_dropped() -> None:
    with FakeOpenAI(answer=_losing) as fake:
        told = await example_digests(llm_config(fake.base_url)).build(REPO, WEEK, "zh")
    assert told.narration is not None
    prose = {p.section: p.sentences for p in told.narration.prose}
    engine = engine_summary(told)
    assert "977" not in "".join(prose["summary"])
    assert prose["summary"][0] == engine[0] and str(told.counts.total) in engine[0]
    assert prose["summary"][-1] == engine[-1] and str(len(told.risks)) in engine[-1]
    assert engine[-1] in render_digest(told, "text")  # the chat form keeps the risk count
    themes = [t for t in told.themes if t.pulls or t.others]  # every theme shown
    assert len(prose["changes"]) == len(themes)
    assert prose["changes"][0].startswith(themes[0].title)  # the engine's facts, in a sentence
    assert f"#{themes[0].pulls[0]}" in prose["changes"][0]
