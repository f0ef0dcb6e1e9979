"""The verl W29 zh full report reads as Chinese outside its list of every PR's title.

Rendered as `prdigest digest verl-project/verl --week 2026-W29 --snapshot ...
--format markdown --lang zh` renders it, without a config and with the example config
(NPU configured): Latin letters are at most 50% of the letters outside the list of
every PR, code spans and links aside (the list holds the titles as written; before
Chinese headlines: 89.6%; with an English body sentence after every headline: 65%; the
target report: 38%); no English body sentence trails a Chinese headline: a key change
is its headline, a key PR its headline and what made it key, in Chinese.
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
# An English sentence after a zh headline: after its colon or full stop, two words or
# more opening in capitals.
_SENTENCE = re.compile(r"[\u4e00-\u9fff][^：。]*[：。]\s*[A-Z][a-z]+ [a-z]+ ")
# What is no prose of the report: code spans and links.
_CODE_OR_LINK = re.compile(r"`[^`\n]*`|\]\([^)]*\)|https?://\S+")


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
def test_latin_letters_are_at_most_half_outside_the_list_code_and_links(
        shared_data: Path, config: tuple[str, ...]) -> None:
    prose = _CODE_OR_LINK.sub(" ", _outside_the_list(_report(shared_data, "verl-2026-07.json",
                                                             *config)))
    letters = _LETTER.findall(prose)
    latin = sum(c.isascii() for c in letters) / len(letters)
    assert latin <= 0.50, round(latin, 3)


@pytest.mark.parametrize("config", CONFIGS, ids=["no-config", "example-config"])
def test_no_english_body_sentence_trails_a_chinese_headline(
        shared_data: Path, config: tuple[str, ...]) -> None:
    report = _report(shared_data, "verl-2026-07.json", *config)
    for heading in ("本周重点变化", "重点 PR 速览"):
        lines = [line for line in _section(report, heading).splitlines()
                 if line.lstrip().startswith("- ")]
        assert len(lines) >= 6, heading
        trailing = [line for line in lines if _SENTENCE.search(line)]
        assert not trailing, trailing


def test_no_key_change_says_its_title_again_or_only_its_background(shared_data: Path) -> None:
    """Read from the bodies: #7076 says "enable vllm patch" under "restore vllm patch",
    #7042 "remove vllm patch" under "remove vllm_ascend patch"; #7051 opens with what
    the legacy trainer assumes and says the change after "so"."""
    report = _report(shared_data, "verl-2026-07.json")
    outside = _outside_the_list(report)
    for restated in ("Enable vllm patch", "Remove vllm patch", "Update ascend ci docker tag"):
        assert restated.lower() not in outside.lower(), restated
    assert "Legacy trainer assumes" not in outside and "introduces it" not in outside


def test_key_prs_give_what_made_them_key_in_chinese(shared_data: Path) -> None:
    """The full report's key PRs: the headline, what made the PR key in Chinese (its
    figure with an arrow, the setting it adds, its size), why it is key, the reasons
    its line gives already left out."""
    key_prs = _section(_report(shared_data, "verl-2026-07.json"), "重点 PR 速览")
    line = next(x for x in key_prs.splitlines() if x.startswith("- **#7061 "))
    assert "实测 ~54 GiB → ~150 MiB" in line and "新增配置 `save_lora_only`" in line
    assert "（入选原因：新功能）" in line
    assert "reduces" not in line.lower()


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


def test_a_title_the_lexicon_cannot_say_whole_is_given_as_written(shared_data: Path) -> None:
    """vllm #48596 ("Offload last block at request finish and prevent reuse race"): the
    lexicon cannot say all of it, so it is written as its title says after its type in
    Chinese, never cut to "修复"; the key PRs add the fix it makes."""
    report = _report(shared_data, "vllm-2026-W29.json")
    title = "Offload last block at request finish and prevent reuse race"
    assert f"{title}（#48596）" in _section(report, "执行摘要")
    assert f"- **#48596 修复：{title}**：修复竞态问题" in _section(report, "重点 PR 速览")
    assert "修复（#48596）" not in report


def test_the_report_page_keeps_each_prs_own_sentence_collapsed_under_original(
        shared_data: Path) -> None:
    """The English sentence the zh lines leave out is one click away on the page, in a
    collapsed 原文 under its line, and escaped as all PR text is."""
    from bot.config import RepoConfig
    from bot.engine import build_digest
    from bot.render.html import PageLinks, render_report_page
    from bot.snapshot import read_snapshot

    digest = build_digest(read_snapshot(shared_data / "verl-2026-07.json"), "2026-W29",
                          repo_config=RepoConfig(), lang="zh")
    page = render_report_page(digest, PageLinks())
    originals = re.findall(r'<details class="original"><summary>原文</summary><p>(.*?)</p>'
                           r'</details>', page)
    assert len(originals) >= 10
    assert any("Disable vLLM&#39;s multimodal processor cache" in o for o in originals)
    assert "<details open" not in page  # collapsed
    english = render_report_page(
        build_digest(read_snapshot(shared_data / "verl-2026-07.json"), "2026-W29",
                     repo_config=RepoConfig(), lang="en"), PageLinks())
    assert 'class="original"' not in english  # the en lines are those sentences
