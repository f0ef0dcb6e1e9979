"""Risks and summaries on the real snapshots read as a reviewer would read them.

Expected values come from reading the threads and bodies in ../shared/data: the vllm
approvals ("LGTM, just ...", "LGTM!"), the praise ("Great idea! ..."), the replies that
say the change was made ("Solved", "Done in 895730f3"), and the bodies whose first
sentences are filler or lead into a code block.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.engine.risks import find_risks
from bot.engine.summarize import body_summary, figures
from bot.i18n import translator
from bot.models import Concern, PullRequest, Risk
from bot.snapshot import read_snapshot

pytestmark = pytest.mark.realdata
T = translator("en")


def _pulls(shared_data: Path, name: str) -> dict[int, PullRequest]:
    return {p.number: p for p in read_snapshot(shared_data / name).pulls}


def _risks(pull: PullRequest) -> list[Risk]:
    return find_risks(pull, T, reviews_recorded=False)


def test_vllm_approvals_praise_and_done_replies_are_not_risks(shared_data: Path) -> None:
    pulls = _pulls(shared_data, "vllm-2026-W29.json")
    for number in (44549, 48660, 48107, 48846, 48500):  # LGTM, LGTM!, praise, fixed, solved
        assert _risks(pulls[number]) == [], number
    every = [r for p in pulls.values() for r in _risks(p)]
    assert not [r for r in every if r.quote and re.match(r"(LGTM|Great|Pushed a fix)", r.quote)]


def test_vllm_review_doubts_on_the_security_fix_stay_and_say_so(shared_data: Path) -> None:
    """The lock asked for on #48583 is a doubt about the race the fix is for: raised, as
    a security fix's doubt is; the rename asked beside it is a naming nit: low."""
    risks = _risks(_pulls(shared_data, "vllm-2026-W29.json")[48583])
    assert len(risks) == 2
    assert all("security fix" in r.summary for r in risks)
    by_quote = {r.quote: r for r in risks}
    lock = next(r for q, r in by_quote.items() if q and q.startswith("Let's wrap"))
    rename = next(r for q, r in by_quote.items() if q and q.startswith("Rename"))
    assert lock.severity == "medium" and lock.summary.startswith("May race under concurrency")
    assert rename.severity == "low" and rename.summary.startswith("A naming remark")


def test_verl_conversation_comment_on_6932_is_read(shared_data: Path) -> None:
    """tardis-key asked in #6932's conversation whether the issue exists only on NPU;
    wuxibin89's "Better move it to ..." beside it is a placement remark."""
    risks = _risks(_pulls(shared_data, "verl-2026-07.json")[6932])
    authors = {r.author: r for r in risks}
    assert set(authors) == {"tardis-key", "wuxibin89"}
    assert authors["tardis-key"].summary.startswith("The change may cover NPU only")
    assert authors["wuxibin89"].severity == "low"
    assert authors["wuxibin89"].summary.startswith("A remark on where the code belongs")
    # wuxibin89's explanation of the CUDA streams on #7083 asks nothing: no risk.
    assert _risks(_pulls(shared_data, "verl-2026-07.json")[7083]) == []


def test_vllm_praise_is_cut_from_a_real_concern(shared_data: Path) -> None:
    """ivanium on #47782 asks how the change works with chunked prefill; the sentence
    saying what breaks is about the code before the PR ("I found the previous handling
    ... silently breaks the marconi-style caching", which the PR's title preserves):
    the concern is the question, not that the PR may break what works."""
    [risk] = _risks(_pulls(shared_data, "vllm-2026-W29.json")[47782])
    assert risk.quote is not None and not risk.quote.startswith("Great idea")
    assert "how does this work with chunked prefill?" in risk.quote
    assert risk.concerns == (Concern.QUESTION,)
    assert "breaks" not in risk.quote


def test_verl_done_in_sha_is_addressed_and_the_bot_finding_keeps_its_consequence(
        shared_data: Path) -> None:
    pulls = _pulls(shared_data, "verl-2026-07.json")
    assert _risks(pulls[6974]) == []
    [finding] = _risks(pulls[7037])
    assert finding.severity == "medium"
    assert finding.quote is not None
    assert finding.quote.endswith("the next resume will load empty prompt data, causing a "
                                  "failure.")


def test_verl_summaries_are_whole_sentences_without_filler(shared_data: Path) -> None:
    pulls = _pulls(shared_data, "verl-2026-07.json")
    mcp = body_summary(pulls[6836].body)
    assert mcp is not None and "That makes sense" not in mcp
    mask = body_summary(pulls[7055].body)
    assert mask == ("Avoid OOM in _build_npu_attn_mask by allocating the causal mask as bool "
                    "directly")
    delta = body_summary(pulls[6974].body)
    assert delta is not None and delta.endswith("…") and "against a pinned" not in delta
    docs = body_summary(pulls[7024].body)
    assert docs is not None and docs.startswith("Added a quick start case")
    for pull in pulls.values():
        summary = body_summary(pull.body)
        if summary:
            assert not re.search(r"\b(as|was|the|of|to)$", summary), (pull.number, summary)


def test_verl_share_of_bytes_is_not_a_measured_effect(shared_data: Path) -> None:
    pulls = _pulls(shared_data, "verl-2026-07.json")
    assert "~1–3%" not in figures(pulls[6974].body)
    assert figures(pulls[7061].body) == ("~54 GiB to ~150 MiB",)
