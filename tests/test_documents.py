"""The message document: what the core lays out for every platform, compared as a
readable outline (tests/golden/documents/<case>.txt; `UPDATE_GOLDEN=1` rewrites them),
and the rules that make it safe - no text from GitHub forges a span, every platform
encodes any document, a new reply kind needs no platform's code."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from adapters.feishu.render import encode as feishu_encode
from adapters.slack.render import encode as slack_encode
from adapters.telegram.render import encode as telegram_encode
from bot.actions import answers_in_place, decode_action
from bot.models import Command, Digest, Reply
from bot.render import layouts
from bot.render.document import (
    MARKUP,
    Buttons,
    Code,
    Document,
    Items,
    Link,
    PullRef,
    Strong,
    Text,
    outline,
    parse_blocks,
)
from bot.render.layouts import (
    _LAYOUTS,
    digest_document,
    layout_for,
    reply_document,
)
from testkit.fakes.telegram import parse_html
from testkit.feishu_checks import assert_valid as assert_valid_card
from testkit.golden import updating
from testkit.slack_checks import assert_valid as assert_valid_slack
from testkit.slack_checks import pull_answer

GOLDEN = Path(__file__).resolve().parent / "golden"
DOCUMENTS = GOLDEN / "documents"
# The inputs the platforms' own goldens render: one document each.
INPUTS = {path.parent.name: path for path in sorted((GOLDEN / "telegram").glob("*/input.json"))
          if not path.parent.name.startswith("_")}


def _document(case: dict[str, object]) -> Document:
    if "digest" in case:
        return digest_document(msgspec.convert(case["digest"], Digest))
    return reply_document(msgspec.convert(case["reply"], Reply))


def _replies() -> Iterator[tuple[str, Reply]]:
    for lang in ("en", "zh"):
        yield f"pull-summary-{lang}", Reply(kind="pull", lang=lang, pull=pull_answer(),
                                           mode="summary")
        yield f"pull-merged-{lang}", Reply(kind="pull", lang=lang, mode="merged",
                                           pull=pull_answer(), topics=("rollout",),
                                           params=(("author", "octo"),))
        yield f"topics-{lang}", Reply(kind="topics", lang=lang, topics=("npu",),
                                      available_topics=("npu", "rollout", "ckpt"))
        yield f"subscribed-{lang}", Reply(kind="subscribed", lang=lang, topics=("npu",))


CASES = {**{name: path for name, path in INPUTS.items()}, **dict(_replies())}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_document_matches_its_outline(name: str) -> None:
    source = CASES[name]
    document = (_document(json.loads(source.read_text(encoding="utf-8")))
                if isinstance(source, Path) else reply_document(source))
    text = outline(document)
    path = DOCUMENTS / f"{name}.txt"
    if updating():
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_there_is_an_outline_for_every_case_and_no_other() -> None:
    assert {p.stem for p in DOCUMENTS.glob("*.txt")} == set(CASES)


HOSTILE = [
    "<!channel> <@U123> @all <at user_id=\"all\"></at> <b>bold</b> &amp; & < >",
    "*bold* _it_ ~strike~ `code` ```fence``` [link](javascript:alert(1)) **x**",
    "zero\u200bwidth\u2060joiner \ue001forged\ue002 \ue005https://evil.example\ue006x\ue007",
    "\x1b[31mred\x00 #12 org/a#3 | pipe",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_no_text_forges_a_span(text: str) -> None:
    """Whatever a title holds - our own span marks included - it is one text span."""
    blocks = parse_blocks(f"• {MARKUP.esc(text)}")
    assert blocks == (Items((blocks[0].items[0],)),)  # type: ignore[union-attr]
    (span,) = blocks[0].items[0].line  # type: ignore[union-attr]
    assert isinstance(span, Text)
    assert not re.search("[\ue000-\ue0ff]", span.text)
    bold = parse_blocks(MARKUP.bold(text))[0].lines[0]  # type: ignore[union-attr]
    assert [type(s) for s in bold] == [Strong]
    link = parse_blocks(MARKUP.link("https://example.com/x", text))[0].lines[0]  # type: ignore[union-attr]
    assert [type(s) for s in link] == [Link] and link[0].url == "https://example.com/x"  # type: ignore[union-attr]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_on_the_document_path_is_inert_on_every_platform(text: str) -> None:
    reply = Reply(kind="pull", lang="en", mode="summary", pull=pull_answer(text))
    document = reply_document(reply)
    for message in slack_encode(document):
        assert_valid_slack(message)
        sent = json.dumps(message.as_post())
        assert "<!channel>" not in sent and "<@U123>" not in sent and "<b>" not in sent
        assert "<javascript:" not in sent and '"url": "javascript' not in sent
        assert "\ue001" not in sent and "\x1b" not in sent
    for tg in telegram_encode(document):
        shown, entities = parse_html(tg.text)
        assert "@all" not in shown  # a word joiner keeps it from mentioning
        assert ("<b>bold</b>" in shown) == ("<b>bold</b>" in text)  # tags shown as text
        assert all(e.get("url", "https://").startswith("https://") for e in entities)
        assert "\ue001" not in tg.text
    for card in feishu_encode(document):
        assert_valid_card(card)
        content = json.dumps(card, ensure_ascii=False)
        assert "<at" not in content and "<b>" not in content and "\ue001" not in content


def test_the_buttons_run_the_commands_they_say() -> None:
    """A merged-PR notice offers the PR, its summary, following its topic and muting
    the chat's notices for a day; each button's data decodes to the command, in the
    clicker's language."""
    reply = Reply(kind="pull", lang="en", mode="merged", pull=pull_answer(),
                  topics=("npu",), params=(("author", "octo"),))
    buttons = reply_document(reply).buttons()
    assert buttons[0].url == pull_answer().url and buttons[0].primary
    commands = [decode_action(b.action, lang="zh") for b in buttons if b.action]
    assert [(c.kind, c.repo, c.pull, c.topics, c.lang) for c in commands if c] == [
        ("risks", "acme/lumen", 1206, (), "zh"),
        ("summary", "acme/lumen", 1206, (), "zh"),
        ("subscribe", None, None, ("rollout",), "zh"),
        ("mute", None, None, (), "zh")]
    assert commands[-1] is not None and commands[-1].value == "1d"
    assert buttons[-1].label == "Mute for a day"


@pytest.mark.parametrize(("reply", "in_place"), [
    # A PR's summary and its risks turn into each other; following its topic is
    # confirmed beneath.
    (Reply(kind="pull", lang="en", mode="summary", pull=pull_answer(), topics=("npu",)),
     {"risks": True, "subscribe": False}),
    (Reply(kind="pull", lang="en", mode="risks", pull=pull_answer(), topics=("npu",)),
     {"summary": True, "subscribe": False}),
    # A topics list stays for the next click.
    (Reply(kind="topics", lang="en", topics=("npu",), available_topics=("npu", "ckpt")),
     {"subscribe": False, "unsubscribe": False}),
    (Reply(kind="subscribed", lang="en", topics=("npu",)), {"unsubscribe": False}),
    # Records the team keeps.
    (Reply(kind="pull", lang="en", mode="merged", pull=pull_answer(), topics=("npu",)),
     {"risks": False, "summary": False, "subscribe": False, "mute": False}),
    (Reply(kind="notices", lang="en", notices=(
        Reply(kind="pull", lang="en", mode="merged", pull=pull_answer()),)), {"mute": False}),
])
def test_only_another_view_of_an_answers_pr_replaces_it(reply: Reply,
                                                         in_place: dict[str, bool]) -> None:
    """A click showing the PR an answer is about another way puts that view in the
    answer's place; any other click - on a record, or one that does something - is
    answered beneath."""
    actions = [b.action for b in reply_document(reply).buttons() if b.action]
    found = {}
    for action in actions:
        command = decode_action(action, lang="en")
        assert command is not None
        found[command.kind] = answers_in_place(action)
    assert found == in_place


def test_a_view_of_another_pr_is_answered_beneath() -> None:
    summary = Reply(kind="pull", lang="en", mode="summary", pull=pull_answer())
    other = Command(kind="risks", repo="acme/lumen", pull=pull_answer().number + 1)
    same = Command(kind="risks", repo="acme/lumen", pull=pull_answer().number)
    assert layouts.answers_in_place(same, summary)
    assert not layouts.answers_in_place(other, summary)
    assert not layouts.answers_in_place(same, None)  # a digest's button


def test_a_digests_buttons_are_answered_beneath_it() -> None:
    digest = msgspec.convert(json.loads(INPUTS["example-digest-en"].read_text())["digest"],
                             Digest)
    actions = [b.action for b in digest_document(digest).buttons() if b.action]
    assert actions and not any(answers_in_place(a) for a in actions)


def test_notices_in_one_message_offer_muting_them_and_in_chinese() -> None:
    notice = Reply(kind="pull", lang="zh", mode="merged", pull=pull_answer(),
                   params=(("author", "octo"),))
    reply = Reply(kind="notices", lang="zh", notices=(notice, notice))
    [button] = reply_document(reply).buttons()
    command = decode_action(button.action or "", lang="zh")
    assert button.label == "静音 1 天"
    assert command is not None and (command.kind, command.value) == ("mute", "1d")


def test_a_command_too_long_for_a_button_gets_none() -> None:
    topic = "t" * 70
    reply = Reply(kind="topics", lang="en", available_topics=(topic, "npu"))
    labels = [b.label for b in reply_document(reply).buttons()]
    assert labels == ["Follow npu"]


def test_a_new_reply_kind_is_a_core_layout_every_platform_encodes() -> None:
    """A reply kind the platforms have never heard of: registering its layout in the
    core is all it takes - Slack, Telegram and Feishu encode it unchanged."""
    kind = "weather"

    def weather(reply: Reply) -> Document:
        base = reply_document(msgspec.structs.replace(reply, kind="subscribed"))
        return Document(
            kind=kind, lang=reply.lang, title="Build weather", tone="medium",
            notification="Build weather: cloudy",
            blocks=(*parse_blocks(f"{MARKUP.bold('Cloudy')} on {MARKUP.code('main')}\n"
                                  f"• {MARKUP.pr(7, 'https://example.com/p/7', 'org/a')} "
                                  f"{MARKUP.esc('<!channel> flaky')}"),
                    Buttons((base.buttons()[0],))))

    layout_for(kind)(weather)
    try:
        reply = Reply(kind="subscribed", lang="en", topics=("npu",))
        reply = msgspec.structs.replace(reply, kind=kind)  # type: ignore[arg-type]
        document = reply_document(reply)
        assert document.kind == kind
        [slack] = slack_encode(document)
        assert_valid_slack(slack)
        post = json.dumps(slack.as_post())
        assert "*Cloudy*" in post and "`main`" in post and "&lt;!channel&gt; flaky" in post
        assert '"value": "[\\"pd1\\",\\"unsubscribe\\"' in post
        [telegram] = telegram_encode(document)
        assert "<b>Cloudy</b> on <code>main</code>" in telegram.text
        assert '<a href="https://example.com/p/7">org/a#7</a>' in telegram.text
        assert telegram.buttons[0][0].action.startswith('["pd1","unsubscribe"')
        [card] = feishu_encode(document)
        assert_valid_card(card)
        assert card["header"]["template"] == "orange"
        assert card["header"]["title"]["content"] == "Build weather"
    finally:
        _LAYOUTS.pop(kind, None)
        reply_document.cache_clear()  # type: ignore[attr-defined]


def test_spans_of_every_kind_reach_the_outline() -> None:
    line = parse_blocks(f"{MARKUP.esc('a ')}{MARKUP.bold('b')}{MARKUP.code('c')}"
                        f"{MARKUP.link('https://x.example', 'd')}{MARKUP.pr(5, '', 'o/r')}")
    assert line[0].lines[0] == (Text("a "), Strong("b"), Code("c"),  # type: ignore[union-attr]
                                Link("https://x.example", "d"), PullRef(5, "", "o/r"))
