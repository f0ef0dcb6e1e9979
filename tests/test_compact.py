"""The compact digest on the real weeks (verl W29: 28 PRs, vllm W29: 222): at most 800
visible characters in zh and en, the report link first, and the full digest's facts.

The expected counts are the full digest's own (read from the same `Digest`, not from
the compact text), and the risks named must be the most severe of the full list.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from bot.config import ConfigError, RepoConfig, TopicRule, parse_config
from bot.engine import build_digest
from bot.models import ChatForm, Digest, Lang
from bot.render import render_digest
from bot.render.chat import visible_length
from bot.snapshot import read_snapshot

NPU = RepoConfig(timezone="Asia/Shanghai",
                 topics={"npu": TopicRule(keywords=("npu", "ascend"), label="NPU")})
WEEKS = [("verl-2026-07.json", NPU), ("vllm-2026-W29.json", RepoConfig())]
REPORT = "https://reports.example/r/2026-W29"
SEVERITY = {"zh": {"high": "高", "medium": "中", "low": "低"},
            "en": {"high": "high", "medium": "medium", "low": "low"}}


def _compact(shared_data: Path, name: str, config: RepoConfig, lang: Lang, *,
             people: bool = False) -> tuple[Digest, str]:
    digest = build_digest(read_snapshot(shared_data / name), "2026-W29", repo_config=config,
                          lang=lang)
    digest = msgspec.structs.replace(digest, report_url=REPORT,
                                     chat_form=ChatForm(style="compact", people=people))
    return digest, render_digest(digest, "text")


@pytest.mark.realdata
@pytest.mark.parametrize("people", [False, True])
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("name", "config"), WEEKS)
def test_the_real_weeks_fit_800_characters_with_the_link_first(
        shared_data: Path, name: str, config: RepoConfig, lang: Lang, people: bool) -> None:
    digest, text = _compact(shared_data, name, config, lang, people=people)
    assert visible_length(text) <= 800
    lines = text.splitlines()
    assert lines[1].endswith(REPORT)
    assert "…" not in "\n".join(line for line in lines if "[" in line or "【" in line)
    full = render_digest(msgspec.structs.replace(digest, chat_form=ChatForm()), "text")
    assert visible_length(full) > 2 * visible_length(text)


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("name", "config"), WEEKS)
def test_the_real_weeks_say_the_full_digests_facts(
        shared_data: Path, name: str, config: RepoConfig, lang: Lang) -> None:
    digest, text = _compact(shared_data, name, config, lang)
    c = digest.counts
    assert c.merged == c.total  # both weeks merged every PR they hold
    if lang == "en":
        assert f"{c.total} PRs this week ({c.key} key), all merged." in text
        assert f"\n{len(digest.risks)} risks" in text
    else:
        assert f"本周共 {c.total} 个 PR（重点 {c.key} 个），全部已合并。" in text
        assert f"\n风险 {len(digest.risks)} 项" in text
    high = sum(1 for r in digest.risks if r.severity == "high")
    assert (("high)" in text or "其中高" in text) == (high > 0))
    # The risks named: the most severe of the full list, in its order, the worst first.
    shown = re.findall(r"^• #(\d+) ?[\[【](\S+?)[\]】]", text, re.M)
    risk_lines = [(int(n), s) for n, s in shown if s in SEVERITY[lang].values()]
    assert 1 <= len(risk_lines) <= 2
    words = SEVERITY[lang]
    full = [(r.pull, words[r.severity]) for r in digest.risks]
    assert risk_lines[0] == full[0]
    assert all(line in full for line in risk_lines)
    assert [full.index(line) for line in risk_lines] == sorted(full.index(line)
                                                               for line in risk_lines)
    # The security fixes of vllm's week are named in the summary.
    for pull in (p for p in digest.pulls if p.security):
        assert f"#{pull.number}" in text.split("\n\n")[1]


def test_a_channel_style_is_full_or_compact_and_anything_else_names_the_field() -> None:
    base = {"repos": {"a/b": {}}, "channels": [{"platform": "slack", "id": "C1", "repo": "a/b"}]}
    assert parse_config(base).channels[0].chat_form == ChatForm(style="full", people=False)
    base["channels"][0] |= {"style": "compact", "people": True}
    assert parse_config(base).channels[0].chat_form == ChatForm(style="compact", people=True)
    base["channels"][0]["style"] = "short"
    with pytest.raises(ConfigError, match=r"channels\[0\]\.style: invalid value 'short'"):
        parse_config(base)
    base["channels"][0] |= {"style": "full", "people": "yes"}
    with pytest.raises(ConfigError, match=r"channels\[0\]\.people: expected bool"):
        parse_config(base)


@pytest.mark.realdata
@pytest.mark.parametrize(("lang", "said"), [("en", "28 PRs this week (24 key), all merged."),
                                            ("zh", "本周共 28 个 PR（重点 24 个），全部已合并。")])
def test_a_week_merged_whole_says_so_in_a_word(shared_data: Path, lang: Lang,
                                                said: str) -> None:
    """verl W29 merged all 28 PRs: "all merged", not "28 merged" after "28 PRs"."""
    _, text = _compact(shared_data, "verl-2026-07.json", NPU, lang)
    assert said in text
