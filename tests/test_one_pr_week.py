"""A week of one PR reads as one PR: where it was, and no trend made of it ("Most of the
work", "100% of the PRs", "the busiest topics" would only say the one PR again); a week
of none says so in whole sentences."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import msgspec
import pytest

from bot.config import RepoConfig
from bot.engine.digest import build_digest
from bot.models import ChatForm, FileChange, Lang, PullRequest, Snapshot
from bot.render import render_digest
from bot.render.document import outline
from bot.render.html import PageLinks, render_report_page
from bot.render.layouts import digest_document

MERGED = datetime(2026, 7, 15, 8, tzinfo=UTC)


def _pull(number: int, title: str, path: str) -> PullRequest:
    return PullRequest(number=number, title=title, url=f"https://github.com/o/r/pull/{number}",
                       author="dev", state="merged", merged_at=MERGED, closed_at=MERGED,
                       additions=12, deletions=3, files=(FileChange(path=path, additions=12),))


ONE = Snapshot(repository="o/r", pulls=(_pull(5962, "remove unicode host test",
                                              "tests/test_basic.py"),))
TWO = Snapshot(repository="o/r", pulls=(*ONE.pulls, _pull(5963, "fix: parse the host header",
                                                          "src/app/host.py")))
SAID = {"en": ("It was in Tests.", "With one PR this week there is no trend to read."),
        "zh": ("这个 PR 属于测试。", "本周只有 1 个 PR，看不出趋势。")}
NOT_SAID = {"en": ("Most of the work", "of the PRs", "busiest topics", "By type"),
            "zh": ("改动主要集中在", "占比", "改动最频繁的主题", "按类型统计")}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("form", ["text", "markdown", "document"])
def test_one_pr_is_placed_and_makes_no_trend(lang: Lang, form: str) -> None:
    digest = build_digest(ONE, "2026-W29", repo_config=RepoConfig(), lang=lang)
    # "document": what every chat platform encodes.
    text = outline(digest_document(digest)) if form == "document" else \
        render_digest(digest, form)  # type: ignore[arg-type]
    for sentence in SAID[lang]:
        assert sentence in text, text
    for words in NOT_SAID[lang]:
        assert words not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_prs_still_make_trends(lang: Lang) -> None:
    text = render_digest(build_digest(TWO, "2026-W29", repo_config=RepoConfig(), lang=lang),
                         "text")
    assert SAID[lang][1] not in text and SAID[lang][0] not in text
    assert NOT_SAID[lang][3] in text  # "By type ..."


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_compact_form_places_the_one_pr_too(lang: Lang) -> None:
    digest = build_digest(ONE, "2026-W29", repo_config=RepoConfig(), lang=lang)
    compact = msgspec.structs.replace(digest, chat_form=ChatForm(style="compact"))
    text = render_digest(compact, "text")
    assert SAID[lang][0] in text and NOT_SAID[lang][0] not in text, text


NONE_SAID = {"en": ("No PRs this week.", "With no PR this week there is no trend to read."),
             "zh": ("本周没有 PR。", "本周没有 PR，看不出趋势。")}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("form", ["text", "markdown", "html", "document"])
def test_a_week_of_no_pr_says_so_in_whole_sentences(lang: Lang, form: str) -> None:
    digest = build_digest(Snapshot(repository="o/r", pulls=()), "2026-W29",
                          repo_config=RepoConfig(), lang=lang)
    if form == "html":
        page = render_report_page(digest, PageLinks())
        text = html.unescape(re.sub(r"<style.*?</style>|<[^>]+>", "", page, flags=re.S))
    else:
        text = outline(digest_document(digest)) if form == "document" else \
            render_digest(digest, form)  # type: ignore[arg-type]
    for sentence in NONE_SAID[lang]:
        assert sentence in text, text
    # Not "0 PRs were handled (0 key): .", and the summary searched no risks (the risk
    # section may say none were found).
    for words in ("0 PRs", "0 个 PR", ": .", "：。"):
        assert words not in text, text
    assert text.count("No risks were found") + text.count("未发现风险") <= 1, text
