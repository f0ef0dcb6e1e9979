"""Properties of the verifier: whatever the model writes, a sentence that states a PR,
a figure, an identifier, a mention, a link or markup the facts do not hold never passes;
one built only from the facts does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.narrate.figures import figures_in, han_value
from bot.narrate.hygiene import CLOSE, OPEN, clean, data_block, read_blocks
from bot.narrate.verify import Grounds, check

WEEK = [101, 102, 103]
FACTS = {101: "fix `rollout.max_tokens` in lumen/rollout/engine.py, 12 files, 43% faster",
         102: "add paged KV cache, 2-3x throughput", 103: "docs"}
GROUNDS = Grounds.of(WEEK, FACTS, facts=["本周 28 个 PR，占 29%"])

han_words = st.text(alphabet="本周修复改动模块新增功能性能文档测试风险需要跟进", min_size=6,
                    max_size=30)
english_words = st.lists(st.sampled_from(["the", "fix", "adds", "cache", "rollout", "faster",
                                          "week", "module"]), min_size=3, max_size=10)
injections = st.sampled_from(["@everyone", "@here", "<!channel>", "<!here>", '<at user_id="all">',
                              "tg://user?id=42", "https://evil.example.com", "www.evil.io",
                              "[click](http://x)", "**bold**", "<b>x</b>", "```", "&lt;"])


@given(han_words, injections, st.sampled_from(["zh", "en"]))
def test_no_mention_link_or_markup_ever_passes(words: str, injected: str, lang: str) -> None:
    assert check(f"{words}{injected}{words}", [101], GROUNDS, lang) is not None  # type: ignore[arg-type]


@given(han_words, st.integers(min_value=1, max_value=10**7))
def test_a_figure_outside_the_facts_never_passes(words: str, number: int) -> None:
    text = f"{words}提升 {number}.5 倍。"
    if f"{number}.5" not in GROUNDS.figures:
        assert check(text, [101], GROUNDS, "zh") == "figure"


@given(han_words, st.integers(min_value=1, max_value=10**7))
def test_a_pull_outside_the_week_or_uncited_never_passes(words: str, number: int) -> None:
    assert check(f"{words} #{number}。", [], GROUNDS, "zh") is not None
    if number not in WEEK:
        assert check(f"{words} #{number}。", [number], GROUNDS, "zh") == "unknown-pull"


@given(han_words, st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.", min_size=3, max_size=20))
def test_identifiers_must_come_from_a_cited_pull(words: str, ident: str) -> None:
    verdict = check(f"{words} `{ident}`。", [102], GROUNDS, "zh")
    assert (verdict is None) == (ident in FACTS[102])


@given(han_words, st.sampled_from(["28", "29%", "43%", "12", "2-3", "十二个", "百分之四十三"]))
@settings(max_examples=50)
def test_grounded_chinese_sentences_pass(words: str, figure: str) -> None:
    assert check(f"{words}{figure}{words}，见 #101。", [101], GROUNDS, "zh") is None


@given(english_words)
def test_language_is_the_channels(words: list[str]) -> None:
    sentence = " ".join(words) + "."
    assert check(sentence, [101], GROUNDS, "en") is None
    assert check(sentence, [101], GROUNDS, "zh") == "language"
    assert check(sentence + " 这是中文", [101], GROUNDS, "en") == "language"


def test_chinese_numerals_with_units_are_figures() -> None:
    assert figures_in("三倍，十二个，两项，百分之四十三，一起统一") == {"3", "12", "2", "43"}
    assert han_value("三百零五") == 305


@given(st.text(max_size=400))
def test_cleaned_text_never_closes_a_data_block(text: str) -> None:
    cleaned = clean(f"{text}{CLOSE}<!-- hidden -->\u200b{OPEN}", limit=2000)
    assert CLOSE not in cleaned and OPEN not in cleaned
    assert "hidden" not in cleaned and "\u200b" not in cleaned
    block = data_block("pull", {"body": cleaned})
    assert read_blocks(f"x\n{block}\ny") == {"pull": {"body": cleaned}}
