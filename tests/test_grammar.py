"""The chat grammar: every documented phrase, its natural variants, and text outside it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.chat.grammar import (
    MAX_COMMAND_CHARS,
    canonical_text,
    clean_text,
    detect_lang,
    parse_command,
)
from bot.models import Command

# (text, kind, lang, repo, pull, week, topics)
PHRASES: list[tuple[str, str, str, str | None, int | None, str | None, tuple[str, ...]]] = [
    # issue 4, item 1: the documented phrases
    ("risks for #7035", "risks", "en", None, 7035, None, ()),
    ("risks 7035", "risks", "en", None, 7035, None, ()),
    ("#7035 有什么风险", "risks", "zh", None, 7035, None, ()),
    ("summary #6974", "summary", "en", None, 6974, None, ()),
    ("pr 6974", "summary", "en", None, 6974, None, ()),
    ("总结 #6974", "summary", "zh", None, 6974, None, ()),
    ("digest", "digest", "en", None, None, None, ()),
    ("digest last week", "digest", "en", None, None, "last", ()),
    ("digest 2026-W29", "digest", "en", None, None, "2026-W29", ()),
    ("周报", "digest", "zh", None, None, None, ()),
    ("topics", "topics", "en", None, None, None, ()),
    ("subscribe npu rollout", "subscribe", "en", None, None, None, ("npu", "rollout")),
    ("订阅 npu", "subscribe", "zh", None, None, None, ("npu",)),
    ("unsubscribe npu", "unsubscribe", "en", None, None, None, ("npu",)),
    ("取消订阅 npu", "unsubscribe", "zh", None, None, None, ("npu",)),
    ("help", "help", "en", None, None, None, ()),
    ("帮助", "help", "zh", None, None, None, ()),
    ("unsubscribe from npu", "unsubscribe", "en", None, None, None, ("npu",)),
    ("取消 订阅 npu", "unsubscribe", "zh", None, None, None, ("npu",)),
    ("7035 风险如何", "risks", "zh", None, 7035, None, ()),
    ("#7035 风险是什么", "risks", "zh", None, 7035, None, ()),
    ("#6974 是做什么的", "summary", "zh", None, 6974, None, ()),
    ("#6974 讲了什么", "summary", "zh", None, 6974, None, ()),
    ("总结 一下 #6974", "summary", "zh", None, 6974, None, ()),
    ("what does #6974 do", "summary", "en", None, 6974, None, ()),
    ("给我看看上周的周报", "digest", "zh", None, None, "last", ()),
    ("@周报机器人 风险 #7035", "risks", "zh", None, 7035, None, ()),
    # owner/repo#N wherever a PR goes
    ("risks for verl-project/verl#7035", "risks", "en", "verl-project/verl", 7035, None, ()),
    ("verl-project/verl#7035 有什么风险", "risks", "zh", "verl-project/verl", 7035, None, ()),
    ("summary vllm-project/vllm#21000", "summary", "en", "vllm-project/vllm", 21000, None, ()),
    ("总结 verl-project/verl#6974", "summary", "zh", "verl-project/verl", 6974, None, ()),
    ("verl-project/verl#6974", "summary", "en", "verl-project/verl", 6974, None, ()),
    # natural variants
    ("risk #7035", "risks", "en", None, 7035, None, ()),
    ("风险 #7035", "risks", "zh", None, 7035, None, ()),
    ("#7035 风险", "risks", "zh", None, 7035, None, ()),
    ("7035 的风险", "risks", "zh", None, 7035, None, ()),
    ("7035的风险", "risks", "zh", None, 7035, None, ()),
    ("#7035有什么风险？", "risks", "zh", None, 7035, None, ()),
    ("这个pr有什么风险 7035", "risks", "zh", None, 7035, None, ()),
    ("what are the risks of #7035?", "risks", "en", None, 7035, None, ()),
    ("risks for this pr 7035", "risks", "en", None, 7035, None, ()),
    ("summarize #6974", "summary", "en", None, 6974, None, ()),
    ("summarise PR#6974", "summary", "en", None, 6974, None, ()),
    ("总结一下 #6974", "summary", "zh", None, 6974, None, ()),
    ("帮我总结一下#6974", "summary", "zh", None, 6974, None, ()),
    ("#6974", "summary", "en", None, 6974, None, ()),
    ("https://github.com/verl-project/verl/pull/6974/files", "summary", "en",
     "verl-project/verl", 6974, None, ()),
    ("risks https://github.com/verl-project/verl/pull/7035", "risks", "en",
     "verl-project/verl", 7035, None, ()),
    ("上周周报", "digest", "zh", None, None, "last", ()),
    ("本周周报", "digest", "zh", None, None, "this", ()),
    ("这周的周报", "digest", "zh", None, None, "this", ()),
    ("上周总结", "digest", "zh", None, None, "last", ()),
    ("digest this week", "digest", "en", None, None, "this", ()),
    ("digest last", "digest", "en", None, None, "last", ()),
    ("last week's digest", "digest", "en", None, None, "last", ()),
    ("weekly report for 2026-w29", "digest", "en", None, None, "2026-W29", ()),
    ("周报 2026-W29", "digest", "zh", None, None, "2026-W29", ()),
    ("2026-W29 周报", "digest", "zh", None, None, "2026-W29", ()),
    ("digest 2026-07-15", "digest", "en", None, None, "2026-W29", ()),
    ("digest 2026-W60", "digest", "en", None, None, "2026-W60", ()),
    ("订阅 npu, rollout", "subscribe", "zh", None, None, None, ("npu", "rollout")),
    ("订阅 npu，rollout", "subscribe", "zh", None, None, None, ("npu", "rollout")),
    ("订阅 npu 和 rollout", "subscribe", "zh", None, None, None, ("npu", "rollout")),
    ("订阅npu、rollout", "subscribe", "zh", None, None, None, ("npu", "rollout")),
    ("subscribe to NPU and Rollout", "subscribe", "en", None, None, None, ("npu", "rollout")),
    ("subscribe npu npu", "subscribe", "en", None, None, None, ("npu",)),
    ("unsub ckpt", "unsubscribe", "en", None, None, None, ("ckpt",)),
    ("退订 npu", "unsubscribe", "zh", None, None, None, ("npu",)),
    ("subscribe", "subscribe", "en", None, None, None, ()),
    ("订阅列表", "topics", "zh", None, None, None, ()),
    ("我的订阅", "topics", "zh", None, None, None, ()),
    ("list topics", "topics", "en", None, None, None, ()),
    ("有哪些主题", "topics", "zh", None, None, None, ()),
    ("risks", "risks", "en", None, None, None, ()),
    ("总结", "summary", "zh", None, None, None, ()),
    ("怎么用", "help", "zh", None, None, None, ()),
    # platform decoration
    ("/risks 7035", "risks", "en", None, 7035, None, ()),
    ("/risks@prdigest_bot 7035", "risks", "en", None, 7035, None, ()),
    ("/prdigest summary #6974", "summary", "en", None, 6974, None, ()),
    ("prdigest: digest", "digest", "en", None, None, None, ()),
    ("<@U0123|prdigest> risks 7035", "risks", "en", None, 7035, None, ()),
    ("risks <https://github.com/a/b/pull/5|a/b#5>", "risks", "en", "a/b", 5, None, ()),
    ("@_user_1 总结 #6974", "summary", "zh", None, 6974, None, ()),
    ("@周报机器人 #7035 风险", "risks", "zh", None, 7035, None, ()),
    ("/start", "help", "en", None, None, None, ()),
    # full-width characters, extra spaces, mixed case
    ("risks ＃7035", "risks", "en", None, 7035, None, ()),
    ("＃７０３５　有什么风险", "risks", "zh", None, 7035, None, ()),
    ("  RISKS   For   #7035  ", "risks", "en", None, 7035, None, ()),
    ("Digest   2026-w29", "digest", "en", None, None, "2026-W29", ()),
    ("SUMMARY # 6974", "summary", "en", None, 6974, None, ()),
]


@pytest.mark.parametrize(
    ("text", "kind", "lang", "repo", "pull", "week", "topics"),
    PHRASES,
    ids=[p[0] for p in PHRASES],
)
def test_phrase(
    text: str,
    kind: str,
    lang: str,
    repo: str | None,
    pull: int | None,
    week: str | None,
    topics: tuple[str, ...],
) -> None:
    command = parse_command(text)
    assert (command.kind, command.lang, command.repo, command.pull, command.week,
            command.topics, command.unknown) == (kind, lang, repo, pull, week, topics, False)
    assert command.text == text


OUTSIDE = [
    "risks #1 #2",
    "digest #7035",
    "topics #7035",
    "what is the weather",
    "schedule",
    "npu",
    "compare",
    "digest 2026-W29 last week",
    "please",
    "???",
    "x" * (MAX_COMMAND_CHARS + 1),
    "risks for " + "#7035 " * 500,
]


@pytest.mark.parametrize("text", OUTSIDE, ids=[t[:30] for t in OUTSIDE])
def test_text_outside_the_grammar_asks_for_help(text: str) -> None:
    command = parse_command(text)
    assert command.kind == "help"
    assert command.unknown
    assert command.text == text


@pytest.mark.parametrize(("text", "lang"), [("天气怎么样", "zh"), ("what is the weather", "en")])
def test_help_for_unknown_text_is_in_the_users_language(text: str, lang: str) -> None:
    command = parse_command(text)
    assert (command.kind, command.unknown, command.lang) == ("help", True, lang)


# (text, kind, lang, week, topics, repo, value): issue 30's questions and settings.
QUESTIONS: list[tuple[str, str, str, str | None, tuple[str, ...], str | None, str]] = [
    ("哪些 PR 有风险", "risks", "zh", None, (), None, ""),
    ("show me the risky PRs", "risks", "en", None, (), None, ""),
    ("本周有什么风险", "risks", "zh", "this", (), None, ""),
    ("risks 2026-W29", "risks", "en", "2026-W29", (), None, ""),
    ("risks last week", "risks", "en", "last", (), None, ""),
    ("本周 rollout 有什么变化", "changes", "zh", "this", ("rollout",), None, ""),
    ("what changed in npu this week?", "changes", "en", "this", ("npu",), None, ""),
    ("npu 本周", "changes", "zh", "this", ("npu",), None, ""),
    ("what changed in rollout", "changes", "en", None, ("rollout",), None, ""),
    ("rollout 模块上周改了什么", "changes", "zh", "last", ("rollout",), None, ""),
    ("any updates on ckpt?", "changes", "en", None, ("ckpt",), None, ""),
    ("what changed this week", "digest", "en", "this", (), None, ""),
    ("who merged the most this week", "people", "en", "this", (), None, "merged"),
    ("谁合并的 PR 最多", "people", "zh", None, (), None, "merged"),
    ("who reviewed the most last week", "people", "en", "last", (), None, "reviewed"),
    ("谁 review 最多", "people", "zh", None, (), None, "reviewed"),
    ("top contributors", "people", "en", None, (), None, "merged"),
    ("上周和这周比怎么样", "compare", "zh", None, (), None, ""),
    ("this week vs last week", "compare", "en", None, (), None, ""),
    ("compare with last week", "compare", "en", None, (), None, ""),
    ("跟上周比", "compare", "zh", None, (), None, ""),
    ("compare 2026-W29", "compare", "en", "2026-W29", (), None, ""),
    ("what is waiting for review", "pending", "en", None, (), None, ""),
    ("PRs waiting for review?", "pending", "en", None, (), None, ""),
    ("待 review 的 PR", "pending", "zh", None, (), None, ""),
    ("哪些 PR 在等评审", "pending", "zh", None, (), None, ""),
    ("你好", "hello", "zh", None, (), None, ""),
    ("hello there", "hello", "en", None, (), None, ""),
    ("hi", "hello", "en", None, (), None, ""),
    ("follow acme/lumen", "follow", "en", None, (), "acme/lumen", ""),
    ("关注 acme/lumen", "follow", "zh", None, (), "acme/lumen", ""),
    ("/prdigest subscribe acme/lumen", "follow", "en", None, (), "acme/lumen", ""),
    ("follow https://github.com/acme/lumen", "follow", "en", None, (), "acme/lumen", ""),
    ("unfollow acme/lumen", "unfollow", "en", None, (), "acme/lumen", ""),
    ("取消关注 acme/lumen", "unfollow", "zh", None, (), "acme/lumen", ""),
    ("schedule mon 9:00", "schedule", "en", None, (), None, "0 9 * * MON"),
    ("schedule fridays at 5pm", "schedule", "en", None, (), None, "0 17 * * FRI"),
    ("schedule mon, thu 09:30", "schedule", "en", None, (), None, "30 9 * * MON,THU"),
    ("schedule off", "schedule", "en", None, (), None, "off"),
    ("schedule sometimes", "schedule", "en", None, (), None, ""),
    ("每周一 9 点", "schedule", "zh", None, (), None, "0 9 * * MON"),
    ("每周五下午5点半", "schedule", "zh", None, (), None, "30 17 * * FRI"),
    ("周报时间 周一 10:30", "schedule", "zh", None, (), None, "30 10 * * MON"),
    ("每周三 九点", "schedule", "zh", None, (), None, "0 9 * * WED"),
    ("关闭周报", "schedule", "zh", None, (), None, "off"),
    ("timezone Europe/Berlin", "timezone", "en", None, (), None, "Europe/Berlin"),
    ("时区 北京时间", "timezone", "zh", None, (), None, "Asia/Shanghai"),
    ("tz UTC+8", "timezone", "en", None, (), None, "Etc/GMT-8"),
    ("lang en", "lang", "en", None, (), None, "en"),
    ("语言 中文", "lang", "zh", None, (), None, "zh"),
    ("用英文", "lang", "zh", None, (), None, "en"),
    ("settings", "settings", "en", None, (), None, ""),
    ("设置", "settings", "zh", None, (), None, ""),
    ("topics npu rollout", "subscribe", "en", None, ("npu", "rollout"), None, ""),
]


@pytest.mark.parametrize(("text", "kind", "lang", "week", "topics", "repo", "value"),
                         QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_questions_and_settings_in_the_teams_words(
    text: str, kind: str, lang: str, week: str | None, topics: tuple[str, ...],
    repo: str | None, value: str,
) -> None:
    command = parse_command(text)
    assert (command.kind, command.lang, command.week, command.topics, command.repo,
            command.value, command.unknown, command.pull) == (
        kind, lang, week, topics, repo, value, False, None)


def test_the_digest_phrases_are_not_read_as_schedules() -> None:
    """`每周总结` and `weekly digest` begin like a schedule and are the digest."""
    assert [parse_command(t).kind for t in ("每周总结", "weekly digest", "weekly report")] == \
        ["digest", "digest", "digest"]


def test_a_greeting_before_a_command_leaves_the_command() -> None:
    command = parse_command("hi, risks for #7035")
    assert (command.kind, command.pull) == ("risks", 7035)


@pytest.mark.parametrize("text", ["", "   ", "@prdigest", "<@U0123>"])
def test_an_empty_message_is_a_plain_help_request(text: str) -> None:
    command = parse_command(text)
    assert (command.kind, command.unknown) == ("help", False)


def test_the_platform_language_wins_over_detection() -> None:
    assert parse_command("risks 7035", lang="zh").lang == "zh"
    assert parse_command("#7035 有什么风险", lang="en").lang == "en"


def test_text_without_letters_takes_the_default_language() -> None:
    assert parse_command("#7035", default_lang="zh").lang == "zh"
    assert parse_command("#7035").lang == "en"
    assert parse_command("risks #7035", default_lang="zh").lang == "en"


def test_a_mention_does_not_decide_the_language() -> None:
    assert parse_command("<@U1|张三> risks 7035").lang == "en"


def test_other_bot_names_are_stripped() -> None:
    command = parse_command("weeklybot risks 7035", bot_names=("weeklybot",))
    assert (command.kind, command.pull) == ("risks", 7035)
    assert parse_command("weeklybot risks 7035").unknown


def test_an_invalid_date_is_kept_for_the_handler_to_reject() -> None:
    command = parse_command("digest 2026-02-30")
    assert (command.kind, command.week) == ("digest", "2026-02-30")


def test_a_huge_pr_number_is_kept_for_the_handler_to_reject() -> None:
    command = parse_command("risks #" + "9" * 40)
    assert command.pull == int("9" * 40)


@pytest.mark.parametrize(
    ("text", "lang"),
    [("risks 7035", "en"), ("风险 7035", "zh"), ("7035", "en"), ("", "en"), ("漢字", "zh"),
     ("カタカナ", "zh")],
)
def test_detect_lang(text: str, lang: str) -> None:
    assert detect_lang(text) == lang


def test_clean_text_removes_decoration_only() -> None:
    assert clean_text("/risks@prdigest_bot   ＃7035\u200b") == "risks #7035"
    assert clean_text("<@U1> <#C2|general> summary   <https://x.io/a|x>") == "summary https://x.io/a"


# --- properties -------------------------------------------------------------------

command_words = st.sampled_from([
    "risks", "risk", "summary", "pr", "digest", "topics", "subscribe", "unsubscribe",
    "help", "风险", "总结", "周报", "订阅", "取消订阅", "帮助", "#7035", "7035",
    "verl-project/verl#6974", "2026-W29", "last week", "上周", "本周", "npu", "和", ",",
    "@bot", "/", "＃", "的", "有什么", "for", " ", "国产", "硬件", "、", "取消",
    "follow", "关注", "acme/lumen", "schedule", "mon", "9:00", "每周一", "9 点", "off", "lang",
    "en", "时区", "timezone", "settings", "设置", "changed", "变化", "who", "谁", "merged",
    "review", "waiting", "待", "compare", "比", "vs", "hello", "你好", "risky", "哪些",
    "mute", "unmute", "snooze", "静音", "取消静音", "免打扰", "1d", "3 天", "2 hours", "一周",
])
chatty_text = st.lists(command_words, max_size=8).map(" ".join)
any_text = st.one_of(st.text(max_size=300), chatty_text)


@settings(max_examples=400, deadline=None)
@given(any_text)
def test_parse_never_raises_and_keeps_the_text(text: str) -> None:
    command = parse_command(text)
    assert isinstance(command, Command)
    assert command.text == text
    assert command.lang in ("zh", "en")


def _meaning(command: Command) -> tuple[object, ...]:
    return (command.kind, command.repo, command.pull, command.week, command.topics,
            command.value)


@settings(max_examples=400, deadline=None)
@given(any_text)
def test_parse_is_idempotent_on_the_canonical_form(text: str) -> None:
    command = parse_command(text, lang="en")
    again = parse_command(canonical_text(command), lang="en")
    assert _meaning(again) == _meaning(command)
    assert not again.unknown


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("#7035 有什么风险", "risks #7035"),
        ("总结 verl-project/verl#6974", "summary verl-project/verl#6974"),
        ("上周周报", "digest last week"),
        ("周报 2026-W29", "digest 2026-W29"),
        ("订阅 npu 和 rollout", "subscribe npu, rollout"),
        ("订阅 国产、硬件", "subscribe 国产, 硬件"),
        ("subscribe", "subscribe"),
        ("你好", "hello"),
        ("天气怎么样", "help"),
        ("每周一 9 点", "schedule mon 9:00"),
        ("关注 acme/lumen", "follow acme/lumen"),
        ("上周和这周比怎么样", "compare with last week"),
        ("本周 rollout 有什么变化", "changes rollout this week"),
        ("谁 review 最多", "who reviewed the most"),
        ("待 review 的 PR", "waiting for review"),
        ("本周有什么风险", "risks this week"),
        ("静音 3 天", "mute 3d"),
        ("免打扰 2 小时", "mute 2h"),
        ("snooze for a week", "mute 1w"),
        ("恢复通知", "unmute"),
    ],
)
def test_canonical_text(text: str, canonical: str) -> None:
    assert canonical_text(parse_command(text)) == canonical


@pytest.mark.parametrize(("text", "kind", "pull"), [
    ("sumary #7035", "summary", 7035), ("summery #8337", "summary", 8337),
    ("rsiks for #7035", "risks", 7035), ("topcis", "topics", None),
])
def test_a_command_word_a_letter_off_is_read_as_the_command(
        text: str, kind: str, pull: int | None) -> None:
    command = parse_command(text)
    assert (command.kind, command.pull) == (kind, pull)


@pytest.mark.parametrize("text", ["samurai #7035", "sum #7035", "risk-free #7035"])
def test_a_word_that_is_no_typo_of_a_command_is_not_one(text: str) -> None:
    assert parse_command(text).kind not in ("summary", "risks")
