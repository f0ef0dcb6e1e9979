"""Replies in words: every reply kind and error in both languages and both text formats,
the Chinese catalog complete for the reply templates, and chat round trips end to end."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.ext import babel_extract

from bot.chat.grammar import parse_command
from bot.chat.handler import ERROR_KEYS, CommandHandler
from bot.clock import HeldClock
from bot.digests import Digests
from bot.i18n import translations
from bot.models import Lang, PullAnswer, Reply, Risk
from bot.render import render_reply
from bot.resources import template_dir
from testkit.chat_week import CONFIG, NOW, OPEN_CHANNEL, SNAPSHOT
from testkit.fakes.chat import ChatTestBackend, InMemorySubscriptionStore, RecordingSource

NEWEST = max(p.number for p in SNAPSHOT.pulls)

FORMATS = ("text", "markdown")
LANGS: tuple[Lang, ...] = ("en", "zh")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _reply_templates() -> list[Path]:
    root = template_dir()
    return sorted([*root.glob("text/reply_*.j2"), *root.glob("markdown/reply_*.j2")])


def _messages() -> Iterator[tuple[str | None, str, str | None]]:
    """(context, msgid, plural) of every message in the reply templates."""
    options = {"extensions": "jinja2.ext.do,jinja2.ext.loopcontrols",
               "trim_blocks": "true", "lstrip_blocks": "true"}
    keywords = ["_", "gettext", "ngettext", "pgettext"]
    for path in _reply_templates():
        with path.open("rb") as handle:
            for _, function, message, _ in babel_extract(handle, keywords, [], options):
                parts = [message] if isinstance(message, str) else list(message or ())
                texts = [str(part) for part in parts if part is not None]
                if function == "pgettext":
                    yield texts[0], texts[1], None
                elif function == "ngettext":
                    yield None, texts[0], texts[1]
                else:
                    yield None, texts[0], None


MESSAGES = sorted(set(_messages()), key=str)


def test_the_reply_templates_have_messages() -> None:
    assert len(MESSAGES) > 40


@pytest.mark.parametrize(("context", "msgid", "plural"), MESSAGES, ids=[m[1] for m in MESSAGES])
def test_every_reply_message_has_a_chinese_translation(
    context: str | None, msgid: str, plural: str | None
) -> None:
    catalog = translations("zh")
    if context is not None:
        text = catalog.pgettext(context, msgid)
    elif plural is not None:
        text = catalog.ngettext(msgid, plural, 1)
    else:
        text = catalog.gettext(msgid)
    words = re.sub(r"%\(\w+\)s", "", msgid)
    assert text != msgid or not re.search(r"[A-Za-z]{2}", words), msgid
    assert sorted(re.findall(r"%\(\w+\)s", text)) == sorted(re.findall(r"%\(\w+\)s", msgid))


EXAMPLES = sorted(m[1] for m in MESSAGES if m[0] == "command example")


@pytest.mark.parametrize("example", EXAMPLES)
def test_command_examples_are_commands_in_both_languages(example: str) -> None:
    values = {"number": "7035", "topics": "npu", "ref": "org/a#7035"}
    english = example % values
    chinese = translations("zh").pgettext("command example", example) % values
    ours, theirs = parse_command(english), parse_command(chinese)
    assert not ours.unknown
    assert (ours.kind, ours.repo, ours.pull, ours.week, ours.topics) == (
        theirs.kind, theirs.repo, theirs.pull, theirs.week, theirs.topics)
    assert theirs.lang == "zh"


# --- every reply renders, in every language and format --------------------------------

PULL = PullAnswer(
    repository="verl-project/verl", number=7035, title="[npu] fix: *bold* <b>x</b>",
    url="https://github.com/verl-project/verl/pull/7035", state="merged",
    summary="Fixes `enforce_eager` for NPU.", type="fix", topics=("npu",),
    risks=(Risk(pull=7035, severity="high", summary="Merged with failing checks",
                evidence_url="https://github.com/verl-project/verl/pull/7035/checks"),),
    notes=("a note",),
)
ERROR_PARAMS = {
    "pull-missing": {"command": "risks"},
    "pull-out-of-range": {"number": "0"},
    "pull-not-found": {"number": "4242", "repository": "verl-project/verl"},
    "repo-not-allowed": {"repository": "a/b", "allowed": "verl-project/verl"},
    "unknown-week": {"week": "2026-W60", "year": "2026", "weeks": "53"},
    "week-in-future": {"week": "2026-W40", "current": "2026-W30"},
    "topics-missing": {"command": "subscribe"},
}


def _replies(lang: Lang) -> list[Reply]:
    replies = [
        Reply(kind="help", lang=lang),
        Reply(kind="help", lang=lang, params=(("repository", "verl-project/verl"),
                                              ("text", "what?"))),
        Reply(kind="pull", lang=lang, pull=PULL, mode="risks"),
        Reply(kind="pull", lang=lang, pull=PULL, mode="summary"),
        Reply(kind="pull", lang=lang, pull=msgspec.structs.replace(PULL, risks=()),
              mode="risks"),
        Reply(kind="topics", lang=lang, topics=("npu",), available_topics=("npu", "ci")),
        Reply(kind="topics", lang=lang),
        Reply(kind="subscribed", lang=lang, topics=("npu", "rollout")),
        Reply(kind="unsubscribed", lang=lang, topics=("npu",)),
    ]
    for key in ERROR_KEYS:
        params = tuple(ERROR_PARAMS.get(key, {}).items())
        replies.append(Reply(kind="error", lang=lang, error=key, params=params,
                             topics=("gpu",), available_topics=("npu", "ci")))
    replies.append(Reply(kind="error", lang=lang, error="unknown-week",
                         params=(("week", "2026-02-30"),)))
    replies.append(Reply(kind="error", lang=lang, error="topics-missing",
                         params=(("command", "unsubscribe"),)))
    return replies


def _label(reply: Reply) -> str:
    return f"{reply.kind}-{reply.error or reply.mode or len(reply.params)}"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("index", range(len(_replies("en"))))
def test_every_reply_renders_in_both_languages(fmt: str, index: int) -> None:
    english = render_reply(_replies("en")[index], fmt)
    chinese = render_reply(_replies("zh")[index], fmt)
    for text in (english, chinese):
        assert text.strip()
        assert text.endswith("\n") and not text.endswith("\n\n")
    assert not CJK.search(english)
    assert CJK.search(chinese)
    assert english != chinese


def test_each_error_has_its_own_sentence() -> None:
    sentences = {render_reply(r, "text") for r in _replies("en") if r.kind == "error"}
    assert len(sentences) == len(ERROR_KEYS) + 2


def test_an_unknown_error_key_still_gets_a_sentence() -> None:
    text = render_reply(Reply(kind="error", error="no-such-key"), "text")
    assert "Something went wrong" in text


@pytest.mark.parametrize(
    ("reply", "fmt", "expected"),
    [
        (Reply(kind="pull", pull=PULL, mode="risks"), "markdown", r"fix: \*bold\* \<b"),
        (Reply(kind="pull", pull=PULL, mode="risks"), "text", "*bold* <b>x</b>"),
        (Reply(kind="help", params=(("text", "[x](http://evil) **hi**"),)), "markdown",
         r"\[x\](http://evil) \*\*hi\*\*"),
        (Reply(kind="topics", topics=("npu",)), "markdown", "`npu`"),
        (Reply(kind="topics", topics=("npu",)), "text", "This chat follows npu."),
    ],
)
def test_user_and_github_text_is_escaped_for_the_format(
    reply: Reply, fmt: str, expected: str
) -> None:
    text = render_reply(reply, fmt)
    assert expected in text
    if fmt == "markdown":
        assert not re.search(r"(?<!\\)<b", text)


def test_markdown_lines_stay_apart() -> None:
    text = render_reply(Reply(kind="pull", pull=PULL, mode="summary"), "markdown")
    assert "\n\n" in text
    assert re.search(r"^- \[", render_reply(Reply(kind="pull", pull=PULL, mode="risks"),
                                            "markdown"), re.M)


# --- end to end through the chat test backend -----------------------------------------


@pytest.fixture
def chat() -> ChatTestBackend:
    handler = CommandHandler(Digests(CONFIG, RecordingSource(SNAPSHOT),
                                     subscriptions=InMemorySubscriptionStore(),
                                     clock=HeldClock(NOW)))
    return ChatTestBackend(handler, OPEN_CHANNEL)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("risks for #7035", "1 risk found:"),
        ("risks for #7035", "enforce_eager=False breaks vLLM on Ascend NPU."),
        ("#7035 有什么风险", "发现 1 项风险："),
        ("summary #6974", "2-3x faster"),
        ("总结 #6974", "类型：新功能；主题：ckpt 和 rollout。"),
        ("digest last week", "verl-project/verl weekly report, 2026 week 29"),
        ("digest", "2026 week 30"),
        ("topics", "This chat follows npu."),
        ("主题", "本群已订阅 npu。"),
        ("subscribe rollout", "Subscribed to rollout"),
        ("订阅 rollout", "已订阅 rollout"),
        ("unsubscribe ckpt", "Unsubscribed from ckpt."),
        # The help's examples: the newest PR the chat's data holds, not a fixed number.
        ("help", f"risks #{NEWEST}"),
        ("帮助", f"#{NEWEST} 有什么风险"),
        ("hello there", "Hello! I am prdigest: I post this chat's weekly digest"),
        ("你好", "你好！我是 prdigest：我在本群发布 PR 周报"),
        ("what is the weather", "Sorry, I did not understand “what is the weather”."),
        ("天气怎么样", "抱歉，我没看懂“天气怎么样”。"),
        ("risks last week", "1 PR of 2026-W29 has risks\n• #7035 Update the NPU docker image"),
        ("本周有什么风险", "没有发现风险"),
        # No [server] public_url here: no link to a report the chat could not open.
        ("npu 上周", "2026-W29 的 NPU：1 个 PR\n前一周：0 个。\n• #7035 更新 NPU Docker 镜像\n"),
        ("settings", "What this chat gets\n• Repositories: verl-project/verl.\n• Weekly digest: "
                     "Mondays at 09:00, time zone Asia/Shanghai. Next: 2026-07-27 09:00."),
        ("risks 4242", "verl-project/verl has no PR #4242"),
        ("digest 2026-W60", "2026-W60 does not exist: 2026 has weeks 1 to 53."),
        ("周报 2026-W60", "2026 年只有第 1 到第 53 周"),
        ("subscribe gpu", "There is no topic gpu. Topics you can follow: npu,"),
        ("订阅 gpu", "没有主题 gpu。可订阅的主题：npu、"),
        ("risks vllm-project/vllm#1", "This chat can only read verl-project/verl"),
    ],
)
async def test_chat_round_trip(chat: ChatTestBackend, text: str, expected: str) -> None:
    sent = await chat.ask(text)
    assert expected in sent.text


async def test_replies_come_out_in_order(chat: ChatTestBackend) -> None:
    chat.push_message("help")
    chat.push_message("risks 7035")
    chat.push_message("订阅 rollout")
    kinds = [(await chat.pop_message()).reply.kind for _ in range(3)]
    assert kinds == ["help", "pull", "subscribed"]
    assert chat.outgoing.empty()


async def test_a_chat_outside_the_config_gets_a_polite_refusal() -> None:
    handler = CommandHandler(Digests(CONFIG, RecordingSource(SNAPSHOT), clock=HeldClock(NOW)))
    chat = ChatTestBackend(handler, None)
    assert "not set up for prdigest" in (await chat.ask("risks 7035")).text
    assert "I answer questions about pull requests:" in (await chat.ask("help")).text


# --- whatever is typed, an answer comes back in words ----------------------------------

chat_words = st.sampled_from([
    "risks", "summary", "digest", "topics", "subscribe", "unsubscribe", "help", "风险",
    "changed", "npu 本周", "who merged", "compare", "waiting for review", "你好", "settings",
    "follow", "acme/lumen", "schedule mon 9:00", "lang", "timezone", "变化", "谁",
    "总结", "周报", "订阅", "取消订阅", "帮助", "#7035", "#6974", "#0", "4242", "2026-W29",
    "2026-W60", "2026-W40", "last week", "上周", "npu", "gpu", "rollout", "a/b#1",
    "verl-project/verl#7035", "和", ",", "@bot", "/", "<b>", "*", "`",
])
typed = st.one_of(st.text(max_size=120), st.lists(chat_words, max_size=6).map(" ".join))


@settings(max_examples=150, deadline=None)
@given(text=typed, admin=st.booleans(), fmt=st.sampled_from(FORMATS))
def test_every_message_gets_a_reply_in_words(text: str, admin: bool, fmt: str) -> None:
    handler = CommandHandler(Digests(CONFIG, RecordingSource(SNAPSHOT),
                                     subscriptions=InMemorySubscriptionStore(),
                                     clock=HeldClock(NOW)))
    command = parse_command(text)
    with asyncio.Runner() as runner:
        reply = runner.run(handler.handle(command, channel=OPEN_CHANNEL,
                                          user="U_ADMIN" if admin else None))
    assert reply.error != "internal-error"
    assert reply.lang == command.lang
    assert render_reply(reply, fmt).strip()


@pytest.mark.parametrize(("lang", "more"), [("en", "and 10 more"), ("zh", "另外 10 个")])
def test_a_long_topic_list_is_cut_with_a_count(lang: Lang, more: str) -> None:
    names = tuple(f"m{i:02d}" for i in range(30))
    text = render_reply(Reply(kind="topics", lang=lang, available_topics=names), "text")
    assert "m19" in text and "m20" not in text
    assert more in text


@pytest.mark.parametrize(("text", "note", "plural"), [
    ("summary #7035", "(Its check state at merge is unknown.)", "for 1 PR"),
    ("总结 #7035", "（它合并时的检查状态未知。）", "有 1 个 PR"),
])
async def test_an_answer_about_one_pr_speaks_of_it_not_of_one_pr(
        chat: ChatTestBackend, text: str, note: str, plural: str) -> None:
    said = (await chat.ask(text)).text
    assert note in said and plural not in said
