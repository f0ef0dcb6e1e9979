"""Chinese typesetting: no half-width space beside full-width punctuation."""

from __future__ import annotations

from bot.render.typeset import typeset


def test_spaces_beside_full_width_punctuation_go() -> None:
    assert typeset("新功能（#7061） 和 修复（#7038） 。", "zh") == (
        "新功能（#7061）和 修复（#7038）。")
    assert typeset("原因 ：改动较大 ， 见下", "zh") == "原因：改动较大，见下"


def test_half_width_parentheses_after_chinese_become_full_width() -> None:
    assert typeset("证据 (https://x/pull/1)", "zh") == "证据（https://x/pull/1）"
    # code and English keep theirs
    assert typeset("调用 f(x) 时", "zh") == "调用 f(x) 时"
    assert typeset("fix (ci)", "zh") == "fix (ci)"


def test_a_bullet_keeps_its_space_and_english_is_untouched() -> None:
    assert typeset("- （注）内容\n• “引文” 证据", "zh") == "- （注）内容\n• “引文”证据"
    assert typeset("a (b) , c", "en") == "a (b) , c"
