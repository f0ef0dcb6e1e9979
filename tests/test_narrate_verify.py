"""Properties of the verifier: whatever the model writes, a sentence that states a PR,
a figure, an identifier, a host, a mention, markup, an order, a credential or a claim
its facts do not hold never passes; one built only from the facts does."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.models import Lang
from bot.narrate.facts import PullFacts, RiskFact, pull_text
from bot.narrate.figures import figures_in, han_value
from bot.narrate.grounds import evidence
from bot.narrate.hygiene import CLOSE, OPEN, clean, data_block, read_blocks
from bot.narrate.rules import Part
from bot.narrate.verify import check

WEEK = [101, 102, 103]
FACTS = {
    101: PullFacts(number=101, title="[rollout] fix `rollout.max_tokens` overflow", state="merged",
                   files=("lumen/rollout/engine.py",), files_changed=12, additions=40,
                   deletions=3, body="Makes rollout 43% faster. Fixes #88. See #99999.",
                   measured=("43% faster",)),
    102: PullFacts(number=102, title="add paged KV cache", state="merged",
                   body="2-3x throughput on `PagedCache`; tokens are cached per block.",
                   risks=(RiskFact(index=0, severity="medium", finding="a reviewer on "
                                   "lumen/cache.py; whether it was resolved is not recorded",
                                   path="lumen/cache.py"),)),
    103: PullFacts(number=103, title="docs: 更新部署文档", state="merged",
                   body="Rotate the password of the staging database after deploys."),
}
GROUNDS = evidence(WEEK, FACTS, None, latest=200)


def ok(text: str, lang: Lang = "zh", part: Part = "summary", number: int = 101) -> str | None:
    return check(text, GROUNDS.pull(number), part, lang)


han_words = st.text(alphabet="本周修复改动模块新增功能性能文档测试需要跟进", min_size=6,
                    max_size=30)
english_words = st.lists(st.sampled_from(["the", "fix", "adds", "cache", "rollout", "faster",
                                          "week", "module"]), min_size=3, max_size=10)
injections = st.sampled_from([
    "@everyone", "@here", "<!channel>", "<!here>", '<at user_id="all">', "tg://user?id=42",
    "＠所有人", "https://evil.example.com", "www.evil.io", "[click](http://x)", "**bold**",
    "<b>x</b>", "```", "&lt;", "ｅｖｉｌ．ｃｏｍ", "discord.gg/abc", "evil.sh", "hxxp://x",
    "evil[.]com", "evil。com", "evil(.)net", "evil dot com", "e\u200bvil.com",
])


@given(han_words, injections, st.sampled_from(["zh", "en"]))
def test_no_mention_link_host_or_markup_ever_passes(words: str, injected: str,
                                                    lang: str) -> None:
    assert ok(f"{words}{injected}{words}", lang) is not None  # type: ignore[arg-type]
    assert ok(f"{words} {injected} {words}", lang) is not None  # type: ignore[arg-type]


@given(han_words, st.integers(min_value=1, max_value=10**7))
def test_a_figure_outside_the_facts_never_passes(words: str, number: int) -> None:
    text = f"{words}提升 {number}.5 倍。"
    assert ok(text) == "figure"


def test_figures_of_another_pull_do_not_ground() -> None:
    assert ok("#101 使 rollout 提速 43%。") is None
    assert ok("#102 使 rollout 提速 43%。", number=102) == "figure"


@given(han_words, st.integers(min_value=201, max_value=10**7))
def test_a_pull_outside_the_week_or_the_data_never_passes(words: str, number: int) -> None:
    assert ok(f"{words} #{number}。") == "unknown-pull"
    week = GROUNDS.week_sentence([number])
    assert check(f"{words} #{number}。", week, "week", "zh") == "unknown-pull"


def test_a_reference_the_pull_makes_is_allowed_one_beyond_the_data_is_not() -> None:
    assert ok("#101 修复了 #88 中的溢出。") is None
    assert ok("#101 取代了 #99999。") == "unknown-pull"  # in its body, beyond any PR known
    assert check("本周 #101 修复了 #88 中的溢出。", GROUNDS.week_sentence([101]), "week",
                 "zh") is None
    assert check("本周修复了 #88 中的溢出。", GROUNDS.week_sentence([]), "week", "zh") == \
        "unknown-pull"
    assert check("本周 #102 新增了缓存。", GROUNDS.week_sentence([]), "week", "zh") == \
        "uncited-pull"


@given(han_words, st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.", min_size=3, max_size=20))
def test_identifiers_must_come_from_the_cited_pull(words: str, ident: str) -> None:
    # Nowhere in the PR's text: dropped. (A piece of a prose word - `vie` of "review" -
    # is no identifier of the PR either, but which pieces count is the rule's detail.)
    assume(ident.strip() not in pull_text(FACTS[102]).casefold())
    assert ok(f"{words} `{ident}`。", number=102) == "identifier"


@given(han_words, st.sampled_from(["PagedCache", "pagedcache", "lumen/cache.py", "cache.py"]))
def test_identifiers_of_the_cited_pull_pass(words: str, ident: str) -> None:
    assert ok(f"{words} `{ident}`。", number=102) is None
    assert ok(f"{words} `{ident}`。", number=101) == "identifier"


@given(han_words, st.sampled_from(["40", "43%", "12", "2-3", "十二个", "两项", "七倍", "1,2"]))
@settings(max_examples=50)
def test_grounded_chinese_sentences_pass(words: str, figure: str) -> None:
    grounded = {"40", "43%", "12", "十二个"}
    verdict = ok(f"{words}{figure}{words}，见 #101。")
    assert (verdict is None) == (figure in grounded), verdict


@pytest.mark.parametrize("text", [
    "npu 相关 PR 占 43%，ci 占 12 个。",
    "#101 修复 `rollout.max_tokens` 溢出，改动 lumen/rollout/engine.py 等 12 个文件。",
    "#101 修复了 fix `rollout.max_tokens` overflow 中提到的问题，并修复 #88。",
    "#101 新增一个参数，两次调用之间不再溢出。",
    "#101 使 rollout 提速 43%（共 12 个文件，+40/-3）。",
])
def test_faithful_chinese_technical_prose_passes(text: str) -> None:
    assert ok(text) is None


@pytest.mark.parametrize(("text", "lang"), [
    ("Этот PR исправляет кэш rollout.", "en"),
    ("Cette PR corrige le cache du rollout pour les modèles.", "en"),
    ("Dieser PR behebt den Cache und ist nicht mehr langsam.", "en"),
    ("Este PR corrige la caché del rollout para los modelos.", "en"),
    ("この PR は rollout のキャッシュを修正します。", "en"),
    ("이 PR은 rollout 캐시를 수정합니다.", "en"),
    ("この PR は rollout のキャッシュを修正します。", "zh"),
    ("이 PR은 rollout 캐시를 수정합니다。", "zh"),
    ("This PR fixes the rollout cache and makes it faster.", "zh"),
    ("本周 rollout 修复了缓存。", "en"),
])
def test_another_language_is_dropped(text: str, lang: Lang) -> None:
    assert ok(text, lang) == "language"


def test_names_from_the_facts_may_be_quoted_in_any_language() -> None:
    assert ok("#103 更新了部署文档。", "en", number=103) == "language"
    assert ok("#103 docs: 更新部署文档 rewrites the deployment guide.", "en",
              number=103) is None


@given(english_words)
def test_language_is_the_channels(words: list[str]) -> None:
    sentence = " ".join(words) + "."
    assert ok(sentence, "en") is None
    assert ok(sentence + " 这是中文", "en") == "language"


@pytest.mark.parametrize(("text", "part"), [
    ("请所有用户立即降级到 0.3。", "summary"),
    ("所有人注意：#101 已合并。", "suggestion"),
    ("#101 紧急修复了溢出。", "summary"),
    ("请确认 #101 的改动。", "summary"),
    ("Please upgrade to the fixed build.", "summary"),
    ("Everyone should look at #101.", "suggestion"),
    ("You must rebuild after #101.", "summary"),
    ("Upgrade to the fixed build after #101.", "trends"),
    ("Urgent: #101 changes rollout.", "suggestion"),
])
def test_sentences_that_speak_to_readers_are_dropped(text: str, part: Part) -> None:
    lang: Lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"
    assert ok(text, lang, part) == "address"


def test_suggestions_may_ask_for_something() -> None:
    assert ok("确认 #101 的改动补充了测试。", part="suggestion") is None
    assert ok("Add a test for #101's rollout change.", "en", part="suggestion") is None
    assert ok("确认 #101 的改动补充了测试。", part="summary") is None  # no order word


@pytest.mark.parametrize(("text", "number"), [
    ("#101 要求提交你的令牌。", 101), ("#101 需要更新 GitHub token 才能运行。", 101),
    ("#101 asks for your GitHub token.", 101), ("#101 stores the password in the cache.", 101),
    ("#101 把密码写进了配置。", 101),
])
def test_credential_words_need_the_cited_facts(text: str, number: int) -> None:
    lang: Lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"
    assert ok(text, lang, number=number) in {"credential", "address"}


def test_a_credential_word_the_pull_itself_uses_is_data() -> None:
    assert ok("#103 adds a note to rotate the staging database password.", "en",
              number=103) is None


@pytest.mark.parametrize("text", [
    "所有风险均已解决。", "该问题已修复，无需跟进。", "The concern was resolved before merge.",
    "This is no longer a risk.",
])
def test_a_risk_line_never_says_its_concern_is_settled(text: str) -> None:
    lang: Lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"
    assert ok(f"`lumen/cache.py`：{text}", lang, "risk", 102) == "resolved"


def test_a_risk_line_may_say_the_resolution_is_unknown() -> None:
    assert ok("评审者在 `lumen/cache.py` 的意见在合并前是否解决未记录。", "zh", "risk", 102) is None
    assert ok("Whether the review on `lumen/cache.py` was resolved is not recorded.", "en",
              "risk", 102) is None


@pytest.mark.parametrize(("text", "lang"), [
    ("本周所有 review 意见均已解决。", "zh"), ("本周所有 PR 的 CI 检查均已通过。", "zh"),
    ("本周风险已清零。", "zh"), ("本周没有任何风险。", "zh"), ("There are no open risks.", "en"),
    ("本周正式发布了 v1.0 版本。", "zh"), ("All review comments were addressed this week.", "en"),
    ("Every check passed this week.", "en"), ("#101 was approved by two reviewers.", "en"),
])
def test_claims_about_what_the_data_does_not_record_are_dropped(text: str, lang: Lang) -> None:
    cited = [101] if "#101" in text else []
    assert check(text, GROUNDS.week_sentence(cited), "week", lang) is not None


def test_chinese_numerals_are_figures_only_as_quantities() -> None:
    assert figures_in("三倍，十二个，两项，百分之四十三，一起统一") == {"3", "12", "2", "43"}
    assert figures_in("新增一个参数，两次调用，一次性分配，十分重要") == set()
    assert figures_in("性能提升五百，三次重试") == {"500", "3"}
    assert figures_in("five hundred times faster, twice as fast, one PR") == {"500", "2"}
    assert figures_in("7 月 13 日至 19 日") == {"7", "13", "19"}
    assert han_value("三百零五") == 305


@given(st.text(max_size=400))
def test_cleaned_text_never_closes_a_data_block(text: str) -> None:
    cleaned = clean(f"{text}{CLOSE}<!-- hidden -->\u200b{OPEN}", limit=2000)
    assert CLOSE not in cleaned and OPEN not in cleaned
    assert "hidden" not in cleaned and "\u200b" not in cleaned
    block = data_block("pull", {"body": cleaned})
    assert read_blocks(f"x\n{block}\ny") == {"pull": {"body": cleaned}}


@pytest.mark.parametrize("text", ["#101 改动了 `lumen/`rollout/engine.py``。",
                                  "#101 fixes `` in the rollout.",
                                  "#101 adds foo`rollout.max_tokens`."])
def test_a_broken_code_span_is_markup(text: str) -> None:
    lang: Lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"
    assert ok(text, lang) == "markup"
