"""Themes are areas, named in the reader's language, and the trends speak as a reader
does (verl W29, vllm W29).

Expected values come from reading the weeks' PR lists: vllm W29 tags its KV offloading
PRs four ways (`[KV Offload]` #47666 #47679 #48150 #48281, `[KV Offloading]` #48102
#48596, `[KVOffload]` #47636, `[kv_offload]` #48545); verl W29 is 12 fixes, 7 chores and
7 features, NPU 12 of its 28 PRs (the seed report).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.config import RepoConfig, TopicRule
from bot.engine import build_digest
from bot.models import Digest, Lang
from bot.render import render_digest
from bot.snapshot import read_snapshot

pytestmark = pytest.mark.realdata

NPU = RepoConfig(topics={"npu": TopicRule(keywords=("npu", "ascend"))})
KV_OFFLOAD = {47666, 47679, 48150, 48281, 48102, 48596, 47636, 48545}


def _vllm(shared_data: Path, lang: Lang) -> Digest:
    return build_digest(read_snapshot(shared_data / "vllm-2026-W29.json"), "2026-W29",
                        repo_config=RepoConfig(), lang=lang)


def _verl(shared_data: Path, lang: Lang, config: RepoConfig = NPU) -> Digest:
    return build_digest(read_snapshot(shared_data / "verl-2026-07.json"), "2026-W29",
                        repo_config=config, lang=lang)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_vllm_has_at_most_sixteen_themes_none_of_one_pr_other_a_quarter(
        shared_data: Path, lang: Lang) -> None:
    """It splintered into 48 themes, 12 of them of a single PR; at eight themes "Other
    changes" held 109 of its 222 PRs. It holds at most a quarter now, areas of two PRs
    or more added beyond eight while it held more."""
    digest = _vllm(shared_data, lang)
    assert 8 < len(digest.themes) <= 16
    assert all(len(t.pulls) + len(t.others) >= 2 for t in digest.themes)
    other = digest.themes[-1]
    assert other.title == ("其他改动" if lang == "zh" else "Other changes")
    assert len(other.pulls) + len(other.others) <= digest.counts.total / 4
    markdown = render_digest(digest, "markdown")
    # Its heading names the areas most of its PRs are in.
    assert other.about and f"**{other.title}**{'（' if lang == 'zh' else ' ('}" in markdown
    report = markdown.split("## ", 9)
    listing = next(part for part in report if part.startswith(("本周全部 PR", "Every PR")))
    assert len(re.findall(r"^- \*\*", listing, flags=re.M)) == len(digest.themes)


def test_one_spelling_of_a_topic_is_one_area(shared_data: Path) -> None:
    digest = _vllm(shared_data, "zh")
    offload = next(t for t in digest.themes if t.area == "kv-offload")
    assert offload.title == "KV 缓存卸载"
    assert {*offload.pulls, *offload.others} >= KV_OFFLOAD
    names = {c.name for c in digest.topics}
    assert "kv-offload" in names
    assert not names & {"kv-offloading", "kv_offload", "kvoffload"}
    assert next(c for c in digest.topics if c.name == "kv-offload").count == len(KV_OFFLOAD)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_chat_shows_at_most_six_themes(shared_data: Path, lang: Lang) -> None:
    for digest in (_vllm(shared_data, lang), _verl(shared_data, lang)):
        text = render_digest(digest, "text")
        changes = text.split("\n\n" + ("本周重点变化" if lang == "zh" else "Key changes"))[1]
        changes = changes.split("\n\n" + ("模块与主题趋势" if lang == "zh" else
                                          "Module and topic trends"))[0]
        assert 1 <= len(re.findall(r"^• ", changes, flags=re.M)) <= 6


def test_an_area_is_named_in_chinese_with_its_kinds(shared_data: Path) -> None:
    """verl without a config: its `[ckpt]` PRs are 检查点, `[trainer]` 训练器; a theme's
    line counts its kinds in Chinese."""
    digest = _verl(shared_data, "zh", RepoConfig())
    titles = {t.area: t.title for t in digest.themes}
    assert titles["checkpoint"] == "检查点" and titles["trainer"] == "训练器"
    assert "ckpt" not in {c.name for c in digest.topics}
    assert all(re.fullmatch(r"(?:\d+ 个[^、\d]+|其余 \d+ 个)(?:、(?:\d+ 个[^、\d]+|其余 \d+ 个))*",
                            t.kinds) for t in digest.themes)


def test_zh_trends_use_chinese_labels_and_say_what_the_busiest_area_was(
        shared_data: Path) -> None:
    """The trends read "fix 居首（12 个），其次是 feat（7）和 chore（6）… npu（12 个，占 43%）"
    (a `[doc] chore:` touching only documentation counts as docs)."""
    text = render_digest(_verl(shared_data, "zh"), "markdown")
    trends = text.split("## 模块与主题趋势\n", 1)[1].split("\n## ", 1)[0]
    assert trends.startswith("按类型统计，问题修复居首（12 个），其次是新功能（7）和维护（6）。")
    assert "NPU（12 个，占 43%）" in trends
    assert "PR 最多的领域是 NPU（12 个），其中多涉及 CI（6）" in trends
    assert not re.search(r"\b(?:fix|feat|chore|npu)\b", trends)


def test_en_trends_name_the_kinds_in_words(shared_data: Path) -> None:
    text = render_digest(_verl(shared_data, "en"), "markdown")
    trends = text.split("## Module and topic trends\n", 1)[1].split("\n## ", 1)[0]
    assert trends.startswith("By type, the most PRs were bug fixes (12), followed by "
                             "new features (7) and maintenance (6).")
    assert "The largest area was NPU with 12 PRs, which also touched CI (6)" in trends


@pytest.mark.parametrize("fmt", ["text", "markdown"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_data_caveats_follow_the_summary_or_close_the_report(
        shared_data: Path, lang: Lang, fmt: str) -> None:
    """verl W29's three caveats came before the summary; in chat they are one line after
    it, in the full report its last lines."""
    digest = _verl(shared_data, lang)
    text = render_digest(digest, fmt)  # type: ignore[arg-type]
    summary = "执行摘要" if lang == "zh" else "Executive summary"
    first = digest.notes[0]
    assert text.index(summary) < text.index(first)
    if fmt == "text":
        after = text.split(summary, 1)[1].strip().split("\n")
        assert first in after[1] and all(n in after[1] for n in digest.notes)
    else:
        last = text.rstrip().splitlines()[-len(digest.notes):]
        assert [line.lstrip("- ") for line in last] == list(digest.notes)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_theme_line_names_kinds_of_change_not_unclassified(shared_data: Path,
                                                             lang: Lang) -> None:
    """vllm's 23 untagged titles have no known kind: where a theme's line names kinds
    (fixes, features ...), they are among "N more", never "8 unclassified changes"."""
    unclassified = "未分类" if lang == "zh" else "unclassified"
    for theme in _vllm(shared_data, lang).themes:
        named = theme.kinds.split("、" if lang == "zh" else ", ")
        if len(named) > 1:
            assert not any(unclassified in kind for kind in named), theme.kinds


def test_a_configured_topic_lists_first_the_prs_whose_title_names_it(shared_data: Path) -> None:
    """verl's NPU topic matches bodies too: #7038 (vision placeholder tokens) is NPU by a
    crash its body reports on NPU, and is the week's best-ranked NPU PR. The NPU theme
    opens with the PRs titled for NPU or Ascend (#6973, #7055, #7024 ...)."""
    npu = _verl(shared_data, "zh").themes[0]
    assert npu.area == "npu" and 7038 in npu.pulls
    first = npu.pulls[:3]
    assert 7038 not in first and {6973, 7055} <= set(first)
