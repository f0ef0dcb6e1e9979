"""Chinese typesetting: no half-width space beside full-width punctuation or between
Chinese characters; a parenthesis after or opening Chinese text is full-width."""

from __future__ import annotations

from bot.render.typeset import typeset


def test_spaces_beside_full_width_punctuation_go() -> None:
    assert typeset("新功能（#7061） 和 修复（#7038） 。", "zh") == (
        "新功能（#7061）和修复（#7038）。")  # nor between Chinese characters
    assert typeset("原因 ：改动较大 ， 见下", "zh") == "原因：改动较大，见下"


def test_half_width_parentheses_after_chinese_become_full_width() -> None:
    assert typeset("证据 (https://x/pull/1)", "zh") == "证据（https://x/pull/1）"
    # code and English keep theirs
    assert typeset("调用 f(x) 时", "zh") == "调用 f(x) 时"
    assert typeset("fix (ci)", "zh") == "fix (ci)"


def test_a_bullet_keeps_its_space_and_english_is_untouched() -> None:
    assert typeset("- （注）内容\n• “引文” 证据", "zh") == "- （注）内容\n• “引文”证据"
    assert typeset("a (b) , c", "en") == "a (b) , c"


def test_a_chinese_note_opening_a_line_gets_full_width_parentheses() -> None:
    assert typeset("(本数据未记录 review。)", "zh") == "（本数据未记录 review。）"
    assert typeset("(#7061) 和", "zh") == "(#7061) 和"  # not Chinese inside: left as written
    assert typeset("(本数据)", "en") == "(本数据)"


def test_a_chinese_note_naming_its_repository_first_gets_full_width_parentheses() -> None:
    # A digest of several repositories opens a note with the repository's name.
    assert (typeset("(verl-project/verl：有 28 个 PR 合并时的检查状态未知。)", "zh")
            == "（verl-project/verl：有 28 个 PR 合并时的检查状态未知。）")
    assert typeset("(GitHub 无法访问)", "zh") == "（GitHub 无法访问）"
    assert typeset("(fix ci) 和", "zh") == "(fix ci) 和"


def test_no_half_width_space_between_chinese_characters() -> None:
    assert typeset("ivanium 在 讨论区 提出", "zh") == "ivanium 在讨论区提出"
    assert typeset("在 vllm/utils.py 提出", "zh") == "在 vllm/utils.py 提出"
