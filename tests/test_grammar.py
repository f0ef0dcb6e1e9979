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
    "hello there",
    "你好",
    "risks #1 #2",
    "digest #7035",
    "risks 2026-W29",
    "topics #7035",
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


@pytest.mark.parametrize(("text", "lang"), [("你好", "zh"), ("hello there", "en")])
def test_help_for_unknown_text_is_in_the_users_language(text: str, lang: str) -> None:
    assert parse_command(text).lang == lang


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
    return (command.kind, command.repo, command.pull, command.week, command.topics)


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
        ("你好", "help"),
    ],
)
def test_canonical_text(text: str, canonical: str) -> None:
    assert canonical_text(parse_command(text)) == canonical
