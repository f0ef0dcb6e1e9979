"""The verl W29 zh full report reads as Chinese outside its list of every PR's title.

Rendered as `prdigest digest verl-project/verl --week 2026-W29 --snapshot ...
--format markdown --lang zh` renders it, without a config and with the example config
(NPU configured): Latin letters are at most 70% of the letters outside the list of
every PR (the list holds the titles as written; before Chinese headlines: 89.6%, the
target report: 38%); a key change's English sentence ends with punctuation, is given
once, and never says the title again in English after the Chinese headline.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app

pytestmark = pytest.mark.realdata

ROOT = Path(__file__).resolve().parent.parent
_LETTER = re.compile(r"[A-Za-z\u4e00-\u9fff]")
# An English sentence after a zh headline in a key change line: after its colon or full
# stop, up to the PR's number.
_SENTENCE = re.compile(r"[：。]([A-Z][^（]*?)（#\d+）$")


def _report(shared_data: Path, snapshot: str, *config: str) -> str:
    repo = "vllm-project/vllm" if snapshot.startswith("vllm") else "verl-project/verl"
    result = CliRunner().invoke(app, [
        "digest", repo, "--week", "2026-W29", "--snapshot", str(shared_data / snapshot),
        "--format", "markdown", "--lang", "zh", *config])
    assert result.exit_code == 0, result.output
    return result.stdout


def _outside_the_list(report: str) -> str:
    """The report but its list of every PR (the footer after it is kept)."""
    before, _, rest = report.partition("## 本周全部 PR")
    footer = rest.split("\n---\n", 1)[1] if "\n---\n" in rest else ""
    return before + footer


def _section(report: str, heading: str) -> str:
    return report.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


CONFIGS = [(), ("--config", str(ROOT / "examples" / "prdigest.toml"))]


@pytest.mark.parametrize("config", CONFIGS, ids=["no-config", "example-config"])
def test_latin_letters_are_at_most_seventy_percent_outside_the_list(
        shared_data: Path, config: tuple[str, ...]) -> None:
    letters = _LETTER.findall(_outside_the_list(_report(shared_data, "verl-2026-07.json",
                                                        *config)))
    latin = sum(c.isascii() for c in letters) / len(letters)
    assert latin <= 0.70, round(latin, 3)


@pytest.mark.parametrize("config", CONFIGS, ids=["no-config", "example-config"])
def test_key_change_sentences_end_with_punctuation_and_are_said_once(
        shared_data: Path, config: tuple[str, ...]) -> None:
    report = _report(shared_data, "verl-2026-07.json", *config)
    lines = [line.strip() for line in _section(report, "本周重点变化").splitlines()
             if line.startswith("  - ")]
    sentences = [m.group(1) for line in lines if (m := _SENTENCE.search(line))]
    assert len(sentences) >= 5
    for sentence in sentences:
        assert re.search(r"[.!?…]$", sentence), sentence
    outside = _outside_the_list(report)
    for sentence in sentences:
        assert outside.count(sentence) == 1, sentence  # not again under the key PRs
    # A headline with a colon of its own is not followed by a second one.
    assert not any(re.search(r"：[^：（]*：[A-Z]", line) for line in lines)


def test_no_key_change_says_its_title_again_or_only_its_background(shared_data: Path) -> None:
    """Read from the bodies: #7076 says "enable vllm patch" under "restore vllm patch",
    #7042 "remove vllm patch" under "remove vllm_ascend patch"; #7051 opens with what
    the legacy trainer assumes and says the change after "so"."""
    report = _report(shared_data, "verl-2026-07.json")
    outside = _outside_the_list(report)
    for restated in ("Enable vllm patch", "Remove vllm patch", "Update ascend ci docker tag"):
        assert restated.lower() not in outside.lower(), restated
    assert "Legacy trainer assumes" not in outside and "introduces it" not in outside


def test_key_prs_give_one_sentence_after_the_chinese_headline(shared_data: Path) -> None:
    """The full report's key PRs: the headline, the sentence that says the change (not
    the description's first sentences), why the PR is key."""
    key_prs = _section(_report(shared_data, "verl-2026-07.json"), "重点 PR 速览")
    line = next(x for x in key_prs.splitlines() if x.startswith("- **#7061 "))
    assert "~54 GiB to ~150 MiB" in line and "（入选原因：" in line
    assert "Add save_lora_only checkpoint support." not in line  # the body's first sentence


def test_a_fix_is_named_by_what_it_fixes_and_names_with_commas_part_by_semicolons(
        shared_data: Path) -> None:
    """#6836 is said "在 ... 下返回 3-tuple，以在 CP>1 时修复 ..."; the summary names it by
    the fix. vllm's security fixes: "替换 diskcache，以消除 pickle 反序列化" is one of
    three names, semicolons between them."""
    summary = _section(_report(shared_data, "verl-2026-07.json"), "执行摘要")
    assert "在 CP>1 时修复 MoE aux/z-loss 梯度爆炸（#6836）" in summary
    assert "返回 3-tuple" not in summary
    vllm = _section(_report(shared_data, "vllm-2026-W29.json"), "执行摘要")
    assert "替换 diskcache，以消除 pickle 反序列化（#44549）；" in vllm


def test_a_title_said_only_by_its_type_is_not_named_by_it(shared_data: Path) -> None:
    """vllm #48596 ("Offload last block at request finish and prevent reuse race"): the
    lexicon says no more than "修复"; the key PRs say what it fixes, the summary names
    other fixes."""
    report = _report(shared_data, "vllm-2026-W29.json")
    assert "修复（#48596）" not in _section(report, "执行摘要")
    assert "- **#48596 修复竞态问题**" in _section(report, "重点 PR 速览")
