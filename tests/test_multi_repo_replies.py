"""Chat replies in a channel of several repositories: the commands a reply suggests name
the PR's repository (and work when sent back), and the channel's repositories are
written one by one, each as code, as a list in the reader's language."""

from __future__ import annotations

import html
import re

import msgspec
import pytest

from adapters.feishu.render import card_content, reply_cards
from adapters.slack.render import render_reply_messages as slack_reply
from adapters.telegram.render import render_reply_messages as telegram_reply
from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.digests import Digests
from bot.models import Lang, Reply
from bot.render import render_reply
from bot.source import SnapshotSource
from testkit.multi_repo import LUMEN, PRISM, prism_snapshot, two_repo_config
from testkit.server_support import example_snapshot, snapshot_clock

CONFIG = two_repo_config()
CHANNEL = CONFIG.channels[0]
# Both repositories have a #1203 (with risks): a bare `risks #1203` would be ambiguous.
NUMBER = 1203


def _source() -> SnapshotSource:
    return SnapshotSource(example_snapshot(), prism_snapshot())


def _handler() -> CommandHandler:
    return CommandHandler(Digests(CONFIG, _source(), clock=snapshot_clock()))


async def _ask(text: str, lang: Lang) -> Reply:
    channel = msgspec.structs.replace(CHANNEL, lang=lang)
    return await _handler().handle(parse_command(text), channel=channel, user="U1")


def _notice(lang: Lang) -> Reply:
    pull = next(p for p in prism_snapshot().pulls if p.number == NUMBER)
    answer = Digests(CONFIG, _source()).answer_for(pull, PRISM, lang)
    assert answer.risks  # the notice suggests asking for them
    return Reply(kind="pull", lang=lang, mode="merged", pull=answer, topics=("npu",),
                 params=(("author", "a"), *CHANNEL.pull_scope(PRISM)))


def _suggested(text: str) -> str:
    """The command a reply's plain text asks the reader to send."""
    found = re.search(r"[“\"]([^”\"]*)[”\"]", text.split("\n", 2)[-1]) or re.search(
        r"`([^`]*)`", text)
    assert found is not None, text
    return found.group(1)


EXPECTED = {"en": f"risks {PRISM}#{NUMBER}", "zh": f"{PRISM}#{NUMBER} 有什么风险"}


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_notice_suggests_asking_for_the_risks_of_its_repositorys_pr(lang: Lang) -> None:
    notice = _notice(lang)
    text = render_reply(notice, "text")
    assert _suggested(text) == EXPECTED[lang]
    assert EXPECTED[lang] in telegram_reply(notice)[0].text
    assert EXPECTED[lang] in str(slack_reply(notice)[0].blocks)
    assert EXPECTED[lang] in html.unescape(card_content(reply_cards(notice)[0]))
    answer = await _ask(_suggested(text), lang)
    assert answer.kind == "pull" and answer.mode == "risks", answer
    assert answer.pull is not None and answer.pull.repository == PRISM


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_summary_suggests_asking_for_the_risks_of_its_repositorys_pr(lang: Lang) -> None:
    summary = await _ask(f"{'summary' if lang == 'en' else '总结'} {PRISM}#{NUMBER}", lang)
    text = render_reply(summary, "text")
    assert EXPECTED[lang] in text
    answer = await _ask(EXPECTED[lang], lang)
    assert answer.kind == "pull" and answer.mode == "risks"
    assert answer.pull is not None and answer.pull.repository == PRISM


async def test_a_channel_of_one_repository_keeps_the_bare_number() -> None:
    notice = msgspec.structs.replace(_notice("en"), params=(("author", "a"),))
    assert _suggested(render_reply(notice, "text")) == f"risks #{NUMBER}"


LISTED = {"en": f"`{LUMEN}` and `{PRISM}`", "zh": f"`{LUMEN}` 和 `{PRISM}`"}


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_help_names_each_repository_as_code_in_a_list(lang: Lang) -> None:
    reply = await _ask("help" if lang == "en" else "帮助", lang)
    markdown = render_reply(reply, "markdown")
    assert LISTED[lang] in markdown
    assert f"{LUMEN}, {PRISM}" not in markdown
    html = telegram_reply(reply)[0].text
    assert f"<code>{LUMEN}</code>" in html and f"<code>{PRISM}</code>" in html
    assert f"{LUMEN}, {PRISM}" not in html
    for text in (str(slack_reply(reply)[0].blocks), card_content(reply_cards(reply)[0])):
        assert f"`{LUMEN}`" in text and f"`{PRISM}`" in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_errors_name_each_repository_as_code_in_a_list(lang: Lang) -> None:
    asked = "risks someone/else#1" if lang == "en" else "someone/else#1 有什么风险"
    refused = await _ask(asked, lang)
    assert refused.error == "repo-not-allowed"
    assert LISTED[lang] in render_reply(refused, "markdown")
    missing = await _ask("risks #999" if lang == "en" else "#999 有什么风险", lang)
    assert missing.error == "pull-not-found"
    text = render_reply(missing, "markdown")
    assert f"`{LUMEN}`" in text and f"`{PRISM}`" in text
    assert f"{LUMEN}, {PRISM}" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_topics_card_names_each_repository(lang: Lang) -> None:
    reply = await _ask("topics" if lang == "en" else "主题", lang)
    assert reply.kind == "topics"
    card = card_content(reply_cards(reply)[0])
    assert f"{LUMEN}, {PRISM}" not in card
    assert LUMEN in card and PRISM in card
