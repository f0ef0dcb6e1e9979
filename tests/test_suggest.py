"""Suggestions name things: the PR(s), the file or the setting, and what to do; the
share-based advice only where no key PR backs it.

Expected values are read by hand from the verl W29 PRs: #7061 adds `save_lora_only`,
#7037 `data.gen_batch_size`; the review concern left open on #7037 is on
`verl/trainer/ppo/v1/trainer_base.py`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.config import RepoConfig, TopicRule
from bot.engine import build_digest
from bot.engine.suggest import Lead, settings_in, suggest
from bot.i18n import translator
from bot.models import Concern, NameCount, Risk, RiskKind
from bot.render.typeset import typeset
from bot.snapshot import read_snapshot

NPU = RepoConfig(topics={"npu": TopicRule(keywords=("npu", "ascend"), label="NPU")})


def test_a_setting_is_named_only_where_the_body_calls_it_one() -> None:
    assert settings_in("Add `save_lora_only` checkpoint support. When enabled, ...") == (
        "save_lora_only",)
    assert settings_in("Set `data.gen_batch_size=1` to stream.") == ("data.gen_batch_size",)
    assert settings_in("Renamed `_reissue_inflight_prompts` for clarity.") == ()
    assert settings_in("The new `--max-model-len` flag caps it.") == ("--max-model-len",)
    assert settings_in(None) == ()


def _fix_share(leads: tuple[Lead, ...]) -> str:
    types = (NameCount(name="fix", count=5, share=0.5, pulls=(1, 2, 3, 4, 5)),)
    (advice,) = suggest((), (), types, (), [], translator("en"), leads=leads)
    return advice


def test_share_advice_names_the_key_prs_behind_it_and_is_generic_only_without_them() -> None:
    named = _fix_share((Lead(number=4, type="fix"), Lead(number=9, type="feat"),
                        Lead(number=2, type="fix")))
    assert "#4, #2" in named and "#9" not in named and "regression test" in named
    generic = _fix_share((Lead(number=9, type="feat"),))
    assert "#" not in generic and "where the bugs came from" in generic


def test_an_unrecorded_review_concern_is_a_verb_its_object_and_why_without_quotes() -> None:
    def risk(n: int, path: str | None, concerns: tuple[Concern, ...],
             subjects: tuple[str, ...] = (), author: str | None = None) -> Risk:
        return Risk(pull=n, severity="low", summary="s", evidence_url="https://x/1",
                    kind=RiskKind.THREAD, resolution="unknown", path=path, author=author,
                    quote="Is this locked? … It races.", concerns=concerns, subjects=subjects)

    risks = (risk(7, "a/b.py", (Concern.RACE,), ("free_blocks",), author="kenji-o"),
             risk(7, "a/c.py", (Concern.QUESTION,)),
             risk(8, None, (Concern.QUESTION,)),
             risk(9, "a/d.py", (Concern.NAMING,)),
             risk(10, "a/e.py", (Concern.DESIGN,)))
    out = suggest(risks, (), (), (), [], translator("en"))
    # Who says what may go wrong; the unrecorded resolution is the data's caveat, said
    # once for the digest, not again in every suggestion.
    assert out[0] == "Re-check `free_blocks` in #7: kenji-o says it may race under concurrency."
    assert out[1] == "Answer the review's open question on #8 (the conversation)."
    assert not any("not recorded" in line for line in out)
    assert "a/c.py" not in " ".join(out)  # one line per PR
    assert "#9" not in " ".join(out)  # a naming remark calls for nothing
    assert out[2] == "Confirm that the review concerns on #10 were addressed."
    assert not any("“" in line or "Is this locked" in line for line in out)
    zh = suggest(risks, (), (), (), [], translator("zh"))
    assert zh[0] == "复查 #7 中的 `free_blocks`：kenji-o 指出可能在并发下出现竞态。"
    assert not any("未记录" in line for line in zh)


def test_a_concern_left_open_at_merge_says_so() -> None:
    open_at_merge = Risk(pull=7, severity="medium", summary="s", evidence_url="https://x/1",
                         kind=RiskKind.THREAD, resolution="unresolved", path="a/b.py",
                         author="kenji-o", concerns=(Concern.CRASH,))
    assert suggest((open_at_merge,), (), (), (), [], translator("en"))[0] == (
        "Re-check the change to `a/b.py` in #7: kenji-o says it may crash. It was left "
        "unresolved at merge.")
    assert suggest((open_at_merge,), (), (), (), [], translator("zh"))[0] == (
        "复查 #7 中的 `a/b.py` 的改动：kenji-o 指出可能崩溃。合并时仍未解决。")


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_verl_week_suggestions_name_prs_files_and_settings(shared_data: Path,
                                                                lang: str) -> None:
    snapshot = read_snapshot(shared_data / "verl-2026-07.json")
    digest = build_digest(snapshot, "2026-W29", repo_config=NPU, lang=lang)  # type: ignore[arg-type]
    suggestions = digest.suggestions
    assert suggestions
    for line in suggestions:
        assert re.search(r"#\d{4}", line), line  # every one names a PR
    text = "\n".join(suggestions)
    # The concern left open on #7037 is named by the code it is about.
    assert "`_reissue_inflight_prompts`" in text and "#7037" in text
    assert "save_lora_only" in text and "#7061" in text
    assert "data.gen_batch_size" in text
    assert "vllm_async_server.py" in text



@pytest.mark.parametrize(("lang", "label", "said"), [
    ("en", "Type annotations", "Run a focused Type annotations regression covering #2"),
    ("zh", "类型标注", "做一次类型标注专项回归"),
])
def test_a_dominant_topic_is_named_as_the_reader_sees_it_everywhere_else(
        lang: str, label: str, said: str) -> None:
    topics = (NameCount(name="typing", label=label, count=4, share=0.8, pulls=(1, 2, 3, 4)),)
    (advice,) = suggest((), topics, (), (), [], translator(lang),
                        leads=(Lead(number=2, type="fix", topics=("typing",)),))
    # As the reader gets it: zh typeset (no spaces beside Chinese).
    assert said in typeset(advice, lang) and "typing" not in advice
