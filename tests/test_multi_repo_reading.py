"""The combined chat digest as a reader of the channel gets it: verl W29 + vllm W29 (and
the example week acme/lumen as a third repository), linked to their report pages, in the
full and the compact form. Each test is one way such a digest read badly: a note said
once per repository, a claim the counts do not bear, lines cut to a few words, a line
that says nothing said under every repository, a third repository that did not fit."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from adapters.feishu.render import digest_cards
from adapters.slack.render import render_digest_messages as slack_messages
from adapters.telegram.render import render_digest_messages as telegram_messages
from bot.config import Config, parse_config
from bot.digests import Digests
from bot.models import ChatForm, Digest, Lang, Style
from bot.render import render_digest
from bot.render.chat import BUDGET, visible_length
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit.server_support import example_snapshot

VERL, VLLM, LUMEN = "verl-project/verl", "vllm-project/vllm", "acme/lumen"
TWO, THREE = (VERL, VLLM), (VERL, VLLM, LUMEN)
WEEK = "2026-W29"
CONFIG: Config = parse_config({
    "repos": {VERL: {"timezone": "Asia/Shanghai",
                     "topics": {"npu": {"keywords": ["npu", "ascend"]}}},
              VLLM: {"timezone": "Asia/Shanghai"}, LUMEN: {}},
    "server": {"public_url": "https://reports.example.com"},
})

pytestmark = pytest.mark.realdata


async def _digest(shared_data: Path, repos: tuple[str, ...], lang: Lang,
                  style: Style = "full") -> Digest:
    source = SnapshotSource(read_snapshot(shared_data / "verl-2026-07.json"),
                            read_snapshot(shared_data / "vllm-2026-W29.json"),
                            example_snapshot())
    digest = await Digests(CONFIG, source).build_many(repos, WEEK, lang, link=True)
    return msgspec.structs.replace(digest, chat_form=ChatForm(style=style))


async def _text(shared_data: Path, repos: tuple[str, ...], lang: Lang,
                style: Style = "full") -> str:
    return render_digest(await _digest(shared_data, repos, lang, style), "text")


NO_REVIEWS = {"en": f"Reviews were not recorded for {VERL} and {VLLM}, so approvals were "
                    "not checked.",
              "zh": f"{VERL} 和 {VLLM} 的数据未记录 review，因此未检查是否经过批准。"}


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_note_true_of_several_repositories_is_said_once_naming_them(
        shared_data: Path, lang: Lang) -> None:
    digest = await _digest(shared_data, THREE, lang)
    about_reviews = [n for n in digest.notes
                     if "review" in n.lower() and ("approv" in n or "批准" in n)]
    assert about_reviews == [NO_REVIEWS[lang]]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_summary_claims_most_of_the_work_only_where_the_counts_bear_it(
        shared_data: Path, lang: Lang) -> None:
    """Shares are each repository's: npu is 43% of verl's week (12 of 28), while no
    vllm topic reaches a quarter (rocm 33 of 222) and ci, rocm and npu together are only
    31% of both weeks' 250 PRs, a share that says nothing of either."""
    most = {"en": "Most of the work was in", "zh": "改动主要集中在"}[lang]
    colon = {"en": ": ", "zh": "："}[lang]
    digest = await _digest(shared_data, TWO, lang)
    assert digest.topics[0].share < 0.25
    full = await _text(shared_data, TWO, lang)
    summary = full.split("\n\n")[2]
    assert f"{VERL}{colon}{most} NPU" in summary
    assert f"{VLLM}{colon}{most}" not in summary and "5%" not in summary
    compact = await _text(shared_data, TWO, lang, "compact")
    assert f"{VERL}{colon}{most} NPU" in compact
    assert f"{VLLM}{colon}{most}" not in compact
    alone = await _text(shared_data, (VERL,), lang)
    assert most in alone


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_compact_form_keeps_each_repositorys_security_fixes(
        shared_data: Path, lang: Lang) -> None:
    """vllm W29 merged three security fixes (#44549, #47595, #48583, read from its PR
    list), verl none: the compact summary says so under vllm's name."""
    compact = await _text(shared_data, TWO, lang, "compact")
    summary = compact.split("\n\n")[1]
    said = {"en": f"{VLLM}: 3 security fixes were merged: ",
            "zh": f"{VLLM}：本周合并了 3 个安全修复："}[lang]
    assert said in summary
    assert all(f"#{n}" in summary for n in (44549, 47595, 48583))


_QUOTE = re.compile(r"“([^”]*)…”")
_CUT_ITEM = re.compile(r"^\s*(?:[-•]|\d+\.)\s+(.*?)…")


@pytest.mark.parametrize("repos", [TWO, THREE], ids=["two", "three"])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_no_line_is_cut_down_to_a_few_words(
        shared_data: Path, lang: Lang, repos: tuple[str, ...]) -> None:
    text = await _text(shared_data, repos, lang)
    least = 24 if lang == "en" else 16
    for quote in _QUOTE.findall(text):
        assert len(quote) >= least, quote
    for line in text.splitlines():
        cut = _CUT_ITEM.match(line)
        if cut:
            shown = re.sub(r"^\S+#\d+\s*", "", cut.group(1))
            assert len(shown) >= least, line


@pytest.mark.parametrize("style", ["full", "compact"])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_count_of_follow_ups_is_one_line_for_every_repository(
        shared_data: Path, lang: Lang, style: Style) -> None:
    digest = await _digest(shared_data, THREE, lang, style)
    text = render_digest(digest, "text")
    counted = re.findall(r"(\d+) follow-up suggestions? in the full report|后续建议 (\d+) 条", text)
    if style == "compact" or counted:
        assert len(counted) == 1, text
        assert int("".join(counted[0])) == len(digest.suggestions)


@pytest.mark.parametrize("style", ["full", "compact"])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_third_repository_still_makes_one_whole_readable_message(
        shared_data: Path, lang: Lang, style: Style) -> None:
    digest = await _digest(shared_data, THREE, lang, style)
    text = render_digest(digest, "text")
    if style == "full":
        assert visible_length(text) <= BUDGET
    for repo in THREE:
        assert re.search(rf"[(（]{repo}[)）][:：] ?https://", text)  # its report link
        assert text.count(f"\n{repo}\n") >= 3  # its own part of the sections
        assert re.search(rf"\n{re.escape(repo)}\n• [^\n]*#\d+", text)  # its PRs, under it
    assert len(telegram_messages(digest)) == 1
    assert len(slack_messages(digest)) == 1
    assert len(digest_cards(digest)) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_last_week_is_compared_only_where_every_repository_has_it(
        shared_data: Path, lang: Lang) -> None:
    digest = await _digest(shared_data, THREE, lang)
    lumen = next(p for p in digest.parts if p.repository == LUMEN)
    assert any(t.previous is not None for t in lumen.topics)  # lumen knows its last week
    assert all(t.previous is None for t in digest.topics)  # verl's and vllm's are not held
    compared = {"en": "Compared with last week", "zh": "与上周相比"}[lang]
    # Each repository's trends are its own: lumen's compare with its last week.
    markdown = render_digest(digest, "markdown")
    trends = markdown.split("\n## ")[3]
    by_repository = dict(part.split("\n", 1) for part in trends.split("### ")[1:])
    assert compared in by_repository[LUMEN]
    assert compared not in by_repository[VERL] and compared not in by_repository[VLLM]
