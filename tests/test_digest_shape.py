"""Themes are change areas, every PR is listed in the full report, the chat text fits.

Expected values come from reading the verl W29 and vllm W29 PR lists by hand: the three
vllm security fixes (#44549, #47595, #48583), the verl NPU fixes, 28 and 222 PRs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.config import RepoConfig, TopicRule
from bot.engine import build_digest
from bot.engine.classify import classify
from bot.engine.themes import Member, kind
from bot.models import Digest, Lang
from bot.render import render_digest
from bot.render.chat import BUDGET, visible_length
from bot.snapshot import read_snapshot

NPU = RepoConfig(topics={"npu": TopicRule(keywords=("npu", "ascend"), label="NPU")})
CASES = [("verl-2026-07.json", NPU, 28), ("vllm-2026-W29.json", RepoConfig(), 222)]


def _digest(shared_data: Path, name: str, config: RepoConfig, lang: Lang) -> Digest:
    return build_digest(read_snapshot(shared_data / name), "2026-W29", repo_config=config,
                        lang=lang)


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("name", "config", "total"), CASES)
def test_every_pr_is_in_one_theme_and_in_the_json_list(
        shared_data: Path, name: str, config: RepoConfig, total: int, lang: Lang) -> None:
    digest = _digest(shared_data, name, config, lang)
    placed = [n for t in digest.themes for n in (*t.pulls, *t.others)]
    assert len(placed) == len(set(placed)) == total
    data = json.loads(render_digest(digest, "json"))
    assert len(data["pulls"]) == total
    assert {"number", "title", "type", "topics", "theme"} <= set(data["pulls"][0])
    markdown = render_digest(digest, "markdown")
    assert all(f"#{n}" in markdown for n in placed)


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("name", "config", "total"), CASES)
def test_the_chat_text_fits_its_budget_with_the_link_near_the_top(
        shared_data: Path, name: str, config: RepoConfig, total: int, lang: Lang) -> None:
    digest = msgspec.structs.replace(_digest(shared_data, name, config, lang),
                                     report_url="https://reports.example/r/2026-W29")
    text = render_digest(digest, "text")
    assert visible_length(text) <= BUDGET
    assert "https://reports.example/r/2026-W29" in "\n".join(text.splitlines()[:3])


@pytest.mark.realdata
def test_themes_are_areas_and_security_is_its_own(shared_data: Path) -> None:
    """vllm W29's three security fixes lead; verl W29's NPU area holds its NPU PRs of
    every kind: the restored and the removed vllm patch (#7076, #7042) together, the
    profiling docs PR (#7024) counted as docs, not refactoring."""
    vllm = _digest(shared_data, "vllm-2026-W29.json", RepoConfig(), "en")
    first = vllm.themes[0]
    assert first.kind == "security" and set(first.pulls) == {44549, 47595, 48583}
    summary = render_digest(vllm, "markdown").split("## Key changes")[0]
    assert all(f"#{n}" in summary for n in (44549, 47595, 48583))
    verl = _digest(shared_data, "verl-2026-07.json", NPU, "zh")
    npu = verl.themes[0]
    assert npu.title == "NPU" and npu.key == "area:npu"
    assert {7055, 7076, 7042, 7024} <= {*npu.pulls, *npu.others}
    assert npu.kinds.startswith("5 个修复、4 个维护改动"), npu.kinds
    profiling = next(p for p in read_snapshot(shared_data / "verl-2026-07.json").pulls
                     if p.number == 7024)
    member = Member(number=7024, cls=classify(profiling, NPU), key=False, folder="",
                    paths=tuple(f.path for f in profiling.files))
    assert kind(member) == "docs"


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_theme_line_counts_every_pr_of_it_by_kind(shared_data: Path, lang: Lang) -> None:
    """verl W29 without a config: its CI area holds eight PRs (three of them not key:
    #7066, #7036, #7025), five of them CI and maintenance and one a test change (#7035,
    `[ci] test: update ascend ci docker tag`)."""
    digest = _digest(shared_data, "verl-2026-07.json", RepoConfig(), lang)
    ci = next(t for t in digest.themes if t.area == "ci")
    assert ci.title == "CI" and len(ci.pulls) + len(ci.others) == 8
    assert {7066, 7036, 7025} <= set(ci.others)
    counts = [int(n) for n in re.findall(r"\d+", ci.kinds)]
    assert sum(counts) == 8 and counts[0] == 5
    text = render_digest(digest, "markdown")
    assert ("**CI**：5 个维护改动" if lang == "zh" else "**CI**: 5 CI and maintenance changes") \
        in text
    assert ("1 个测试改动" if lang == "zh" else "1 test change") in ci.kinds


@pytest.mark.realdata
def test_zh_text_keeps_chinese_spacing(shared_data: Path) -> None:
    text = render_digest(_digest(shared_data, "verl-2026-07.json", NPU, "zh"), "text")
    assert "） " not in text and " （" not in text and " ，" not in text
    assert "入选原因：新功能、改动较大：" not in text


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_quick_view_never_repeats_a_title_and_other_never_leads(
        shared_data: Path, lang: Lang) -> None:
    digest = _digest(shared_data, "vllm-2026-W29.json", RepoConfig(), lang)
    assert digest.types[0].name != "other" or len(digest.types) == 1
    text = render_digest(digest, "text")
    parts = text.split("\n\n")
    quick = parts[_after(parts, {"重点 PR 速览", "Key PRs at a glance"})]
    for line in quick.splitlines():
        head, _, said = line.partition("：" if lang == "zh" else ": ")
        said = said.strip().rstrip("。.")
        assert not said or said not in head, line  # "#48583 X: X" says nothing new
    trends = parts[_after(parts, {"模块与主题趋势", "Module and topic trends"})]
    assert "other" not in trends.split("。" if lang == "zh" else ". ")[0]


def _after(parts: list[str], headings: set[str]) -> int:
    """The index of the part after the one that is one of `headings`."""
    return next(i for i, part in enumerate(parts) if part.strip() in headings) + 1



@pytest.mark.realdata
@pytest.mark.parametrize(("lang", "said", "unsaid"), [
    ("en", "This week 28 PRs were handled (24 key), all of them merged.", ("0 closed", "0 opened")),
    ("zh", "本周共处理 28 个 PR（重点 24 个），全部已合并。", ("关闭 0", "仍未关闭 0")),
])
def test_summary_names_only_the_outcomes_that_happened(
        shared_data: Path, lang: Lang, said: str, unsaid: tuple[str, ...]) -> None:
    """verl W29 merged all 28 of its PRs: no "0 closed, 0 opened" in the first sentence."""
    text = render_digest(_digest(shared_data, "verl-2026-07.json", NPU, lang), "text")
    assert said in text
    assert not any(phrase in text for phrase in unsaid)


def test_summary_with_mixed_outcomes_lists_each_nonzero_one() -> None:
    """The example week has 14 merged, 1 closed and 1 still open (by its PR list)."""
    example = Path(__file__).resolve().parents[1] / "examples" / "snapshot.json"
    digest = build_digest(read_snapshot(example), "2026-W29", repo_config=RepoConfig(), lang="en")
    text = render_digest(digest, "text")
    assert ("This week 16 PRs were handled (11 key): 14 merged, 1 closed without merging, "
            "1 opened and still open.") in text


@pytest.mark.realdata
@pytest.mark.parametrize("fmt", ["text", "telegram", "feishu"])
def test_the_data_caveats_share_one_line_in_chat(
        shared_data: Path, tmp_path: Path, fmt: str) -> None:
    """verl W29 has three caveats (no reviews, no check states, 3 threads unknown): they
    take one line of the chat message, not three."""
    notes = _digest(shared_data, "verl-2026-07.json", NPU, "en").notes
    assert len(notes) == 3
    config = tmp_path / "verl.toml"
    config.write_text('[repos."verl-project/verl".topics]\nnpu = { keywords = ["npu"] }\n')
    result = CliRunner().invoke(app, [
        "digest", "verl-project/verl", "--week", "2026-W29", "--lang", "en",
        "--snapshot", str(shared_data / "verl-2026-07.json"), "--config", str(config),
        "--format", fmt])
    assert result.exit_code == 0, result.output
    text = result.stdout.replace("\\n", "\n")
    lines = [line for line in text.splitlines() if any(n[:30] in line for n in notes)]
    assert len(lines) == 1, lines


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_security_fixes_lead_the_summary_and_are_named_once(shared_data: Path,
                                                             lang: Lang) -> None:
    """vllm W29 merged three security fixes (#44549, #47595, #48583, read from the PR
    list): their sentence comes before the notable features, and #48583 is not also one
    of the notable fixes."""
    digest = _digest(shared_data, "vllm-2026-W29.json", RepoConfig(), lang)
    text = render_digest(digest, "text")
    summary = text.split("\n\n")[2]
    for number in (44549, 47595, 48583):
        assert summary.count(f"#{number}") == 1, number
    security = summary.index("#44549")
    features = summary.index("#40977")  # the first notable feature
    assert security < features


