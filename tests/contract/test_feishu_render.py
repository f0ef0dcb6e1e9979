"""Feishu cards: structure, colour, escaping, byte-limit splitting, goldens, catalog.

Every card is checked against what Feishu enforces on card JSON 2.0 (schema, the
component shapes used here) and the 30 KB request-body limit, measured in bytes of
the body lark-oapi sends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from jinja2.ext import babel_extract

from adapters.feishu.markup import FeishuMarkup
from adapters.feishu.render import (
    SECTION_BREAK,
    card_content,
    digest_cards,
    header_template,
    reply_cards,
    request_bytes,
)
from bot.config import RepoConfig, load_config
from bot.engine import build_digest
from bot.i18n import translations
from bot.models import (
    Counts,
    Digest,
    KeyPull,
    Lang,
    Period,
    PullAnswer,
    PullRequest,
    Reply,
    Risk,
    Snapshot,
    Theme,
)
from bot.render.chat import CHAT_CEILING, chat_view
from bot.resources import template_dir
from bot.snapshot import read_snapshot
from testkit import EXAMPLES
from testkit.feishu_checks import OWN_TAGS, assert_valid
from testkit.golden import updating

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "feishu"
LANGS: tuple[Lang, ...] = ("zh", "en")
HOSTILE_TITLE = ('<at user_id="all">all</at> <at id=all></at> <font color=red>x</font> '
                 "**bold** [click](javascript:alert(1)) `code` ~~s~~ :DONE: ${var} \u202eevil")
ESCAPED_AT = "&#60;at user&#95;id=\"all\"&#62;all&#60;/at&#62;"


def example_digest(lang: Lang, **changes: Any) -> Digest:
    config = load_config(EXAMPLES / "prdigest.toml")
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    digest = build_digest(snapshot, "2026-W29", repo_config=config.repo("acme/lumen"),
                          lang=lang)
    return msgspec.structs.replace(digest, **changes) if changes else digest


def markdown_of(card: dict[str, Any]) -> list[str]:
    return [e["content"] for e in card["body"]["elements"] if e["tag"] == "markdown"]


def strings_of(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)
    elif isinstance(value, str):
        yield value


def feishu_visible(card: dict[str, Any]) -> int:
    """The characters a reader sees of a card: its title and markdown, a link's label,
    no bold marks or font tags."""
    text = card["header"]["title"]["content"] + "".join(markdown_of(card))
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", OWN_TAGS.sub("", text)).replace("**", "")
    return len(text.replace("\n", ""))


# --- the example digest ------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_example_digest_matches_its_golden_cards(lang: Lang) -> None:
    """The golden file is what Feishu receives as `content`; it is checked against the
    card rules and the byte limit too, so it cannot freeze a card Feishu would refuse."""
    digest = example_digest(lang, report_url="https://reports.example.com/acme/lumen/2026-W29")
    rendered = digest_cards(digest)
    path = GOLDEN / f"example-digest-{lang}.json"
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rendered, ensure_ascii=False, indent=2) + "\n")
    golden = json.loads(path.read_text())
    for card in golden:
        assert_valid(card)
    assert rendered == golden


@pytest.mark.parametrize("lang", LANGS)
def test_the_example_digest_is_one_red_card_with_every_section(lang: Lang) -> None:
    digest = example_digest(lang)
    (card,) = digest_cards(digest)
    assert_valid(card)
    assert card["header"]["template"] == "red"  # the example has high risks
    sections = markdown_of(card)
    assert len(sections) == 7
    assert [e["tag"] for e in card["body"]["elements"]][:3] == ["markdown", "hr", "markdown"]
    # The chat form: the chat view's key PRs, within the chat budget.
    for pull in chat_view(digest).quick:
        assert f"&#35;{pull.number} " in "".join(markdown_of(card))
    assert feishu_visible(card) <= CHAT_CEILING
    # Buttons: the first key PRs, then the commands (the week before, the risks of key
    # PRs); no report button without a report address.
    buttons = [c["elements"][0] for c in card["body"]["elements"][-1]["columns"]]
    opened = [b["behaviors"][0]["default_url"] for b in buttons
              if b["behaviors"][0]["type"] == "open_url"]
    assert opened == [k.url for k in chat_view(digest).quick[:3]]
    commands = [b["behaviors"][0]["value"]["action"] for b in buttons
                if b["behaviors"][0]["type"] == "callback"]
    assert commands[0] == '["pd1","digest","acme/lumen",0,"2026-W28"]'
    assert all('"risks"' in c for c in commands[1:]) and commands[1:]


def test_the_full_report_is_the_primary_button() -> None:
    url = "https://reports.example.com/acme/lumen/2026-W29"
    (card,) = digest_cards(example_digest("en", report_url=url))
    last = card["body"]["elements"][-1]["columns"][-1]["elements"][0]
    assert last == {"tag": "button", "text": {"tag": "plain_text", "content": "Full report"},
                    "type": "primary",
                    "behaviors": [{"type": "open_url", "default_url": url}]}


def test_a_report_address_that_is_not_web_gets_no_button() -> None:
    (card,) = digest_cards(example_digest("en", report_url="javascript:alert(1)"))
    assert "javascript" not in card_content(card)


@pytest.mark.parametrize(
    ("severities", "colour"),
    [(("high", "low"), "red"), (("medium", "low"), "orange"), (("low",), "blue"), ((), "green")],
)
def test_the_header_colour_follows_the_worst_risk(severities: tuple[str, ...],
                                                   colour: str) -> None:
    risks = [Risk(pull=1, severity=s, summary="x", evidence_url="https://x") for s in severities]
    assert header_template(risks) == colour  # type: ignore[arg-type]
    digest = example_digest("en", risks=tuple(risks))
    assert {c["header"]["template"] for c in digest_cards(digest)} == {colour}


# --- escaping ------------------------------------------------------------------------


def hostile_digest(lang: Lang) -> Digest:
    pull = PullRequest(
        number=5, title=f"[ui] feat: {HOSTILE_TITLE}", url="https://github.com/o/r/pull/5",
        state="merged", merged_at=datetime(2026, 7, 14, tzinfo=UTC),
        body=f"### What does this PR do?\n\n{HOSTILE_TITLE}\n# heading\n- list", additions=900,
        deletions=2, checks="failure",
    )
    return build_digest(Snapshot(repository="o/r", pulls=(pull,)), "2026-W29",
                        repo_config=RepoConfig(), lang=lang)


@pytest.mark.parametrize("lang", LANGS)
def test_hostile_pr_text_stays_inert_text(lang: Lang) -> None:
    cards = digest_cards(hostile_digest(lang))
    for card in cards:
        assert_valid(card)
    text = "\n".join(s for c in cards for s in markdown_of(c))
    if lang == "en":
        # Shown as typed (the zh chat says a title in Chinese, its prose left out) ...
        assert ESCAPED_AT in text
        assert "&#42;&#42;bold&#42;&#42;" in text
    assert "<at" not in text and "<font color=red" not in text  # ... never a mention
    assert "](javascript" not in text and "**bold**" not in text
    assert "${var}" not in text and ":DONE:" not in text and "\u202e" not in text
    # A line break in GitHub text never starts a heading or a list item of its own.
    assert not re.search(r"\n# heading|\n- list", text)


def test_user_text_echoed_in_help_is_escaped_too() -> None:
    reply = Reply(kind="help", lang="en", params=(("text", '<at id=all></at> hi'),))
    (card,) = reply_cards(reply)
    assert_valid(card)
    assert "&#60;at id=all&#62;&#60;/at&#62; hi" in card_content(card)


# --- splitting -----------------------------------------------------------------------


def long_digest(lang: Lang, risks: int = 400) -> Digest:
    quote = "“逐字引用的评审意见，包含 <at id=all></at> 和 **标记**。” " * 3
    return Digest(
        repository="o/r", week="2026-W29", lang=lang,
        period=Period(since=datetime(2026, 7, 13, tzinfo=UTC),
                      until=datetime(2026, 7, 13, tzinfo=UTC) + timedelta(days=7)),
        counts=Counts(total=risks, key=3, merged=risks, closed=0, opened=0),
        topics=(), types=(), hot_files=(),
        themes=(Theme(title="NPU", pulls=(1, 2, 3)),),
        risks=tuple(Risk(pull=n, severity="medium", summary=f"Risk {n}: {quote}",
                         evidence_url=f"https://github.com/o/r/pull/{n}#discussion_r{n}")
                    for n in range(1, risks + 1)),
        key_pulls=tuple(KeyPull(number=n, title=f"t{n}", short_title=f"t{n}", summary="s",
                                url=f"https://github.com/o/r/pull/{n}") for n in (1, 2, 3)),
        suggestions=("Follow up.",),
    )


@pytest.mark.parametrize("lang", LANGS)
def test_a_long_digest_splits_into_cards_under_the_byte_limit(lang: Lang) -> None:
    digest = long_digest(lang)
    (chat,) = digest_cards(digest)  # the chat form: one card, whatever the week's size
    assert_valid(chat)
    # Where a card may hold less: room for about a third of the sections beside the
    # buttons (some 1.7 KB: links, and commands with their data).
    cards = digest_cards(digest, limit=3200)
    assert len(cards) > 2
    for index, card in enumerate(cards, start=1):
        assert_valid(card)
        assert card["header"]["title"]["content"].endswith(
            f"({index}/{len(cards)})" if lang == "en" else f"（{index}/{len(cards)}）")
        has_buttons = card["body"]["elements"][-1]["tag"] == "column_set"
        assert has_buttons == (index == len(cards))
    # Nothing lost, nothing cut: every line of the one-card rendering is in the parts,
    # whole and in order.
    whole = chat
    lines = [line for s in markdown_of(whole) for line in s.split("\n")]
    split = [line for c in cards for s in markdown_of(c) for line in s.split("\n")]
    assert split == lines


def test_sections_stay_whole_when_they_fit() -> None:
    """A small limit splits between sections, each card starting with a heading."""
    digest = example_digest("en")
    cards = digest_cards(digest, limit=4500)
    assert len(cards) > 1
    for card in cards:
        assert request_bytes(card) <= 4500
        for section in markdown_of(card):
            assert section.startswith("**"), section[:40]


def test_the_measure_counts_bytes_not_characters() -> None:
    """Chinese takes three bytes a character in the body; quotes are escaped twice."""
    (card,) = digest_cards(example_digest("zh"))
    body = json.dumps({"receive_id": "x" * 64, "msg_type": "interactive",
                       "content": card_content(card), "uuid": "x" * 50}, ensure_ascii=False)
    assert request_bytes(card) == len(body.encode()) > len(body)


# --- replies -------------------------------------------------------------------------


def pull_reply(mode: str, severities: tuple[str, ...]) -> Reply:
    risks = tuple(Risk(pull=7, severity=s, summary=f"{s} risk", evidence_url="https://e/1")
                  for s in severities)
    answer = PullAnswer(repository="o/r", number=7, title='fix: <at id=all></at>',
                        url="https://github.com/o/r/pull/7", state="merged",
                        summary="Does things.", risks=risks)
    return Reply(kind="pull", lang="en", pull=answer, mode=mode)


@pytest.mark.parametrize(
    ("mode", "severities", "title", "colour"),
    [("risks", ("high",), "Risks of PR #7", "red"),
     ("risks", (), "Risks of PR #7", "green"),
     ("summary", ("medium", "low"), "Summary of PR #7", "orange"),
     ("merged", ("low",), "Merged: PR #7", "blue")],
)
def test_a_pull_reply_is_a_card_coloured_by_its_risks(mode: str, severities: tuple[str, ...],
                                                      title: str, colour: str) -> None:
    (card,) = reply_cards(pull_reply(mode, severities))
    assert_valid(card)
    assert card["header"] == {"title": {"tag": "plain_text", "content": title},
                              "subtitle": {"tag": "plain_text", "content": "o/r"},
                              "template": colour}
    button = card["body"]["elements"][-1]["columns"][0]["elements"][0]
    assert button["behaviors"][0]["default_url"] == "https://github.com/o/r/pull/7"
    assert "&#60;at id=all&#62;" in card_content(card)


@pytest.mark.parametrize(
    ("reply", "colour"),
    [(Reply(kind="help", lang="zh"), "blue"),
     (Reply(kind="error", lang="en", error="pull-not-found",
            params=(("number", "9"), ("repository", "o/r"))), "grey"),
     (Reply(kind="subscribed", lang="zh", topics=("npu",)), "green"),
     (Reply(kind="topics", lang="en", topics=("npu",), available_topics=("npu", "ci")),
      "blue")],
)
def test_other_replies_are_single_cards(reply: Reply, colour: str) -> None:
    (card,) = reply_cards(reply)
    assert_valid(card)
    assert card["header"]["template"] == colour
    if reply.lang == "zh":
        assert re.search(r"[\u4e00-\u9fff]", card["header"]["title"]["content"])


def test_a_digest_reply_is_the_digest() -> None:
    digest = example_digest("zh")
    assert reply_cards(Reply(kind="digest", lang="zh", digest=digest)) == digest_cards(digest)


# --- the catalog ---------------------------------------------------------------------


def test_every_feishu_message_has_chinese() -> None:
    catalog = translations("zh")
    missing = []
    for path in sorted((template_dir() / "feishu").glob("*.j2")):
        with path.open("rb") as handle:
            for _, function, message, _ in babel_extract(
                    handle, ("_", "gettext", "ngettext", "pgettext"), [], {}):
                ids = message if isinstance(message, tuple) else (message,)
                singular = ids[1] if function == "pgettext" else ids[0]
                if function == "pgettext":
                    translated = catalog.pgettext(ids[0], singular)
                else:
                    translated = catalog.gettext(singular)
                if translated == singular and re.search(r"[A-Za-z]{3}", singular):
                    missing.append(f"{path.name}: {singular}")
    assert missing == []


def test_section_break_never_survives_escaping() -> None:

    assert SECTION_BREAK not in FeishuMarkup().esc(f"a{SECTION_BREAK}b")


@pytest.mark.realdata
def test_the_real_verl_week_fits(shared_data: Path) -> None:
    snapshot = read_snapshot(shared_data / "verl-2026-07.json")
    config = RepoConfig(timezone="Asia/Shanghai")
    for lang in LANGS:
        cards = digest_cards(build_digest(snapshot, "2026-W29", repo_config=config, lang=lang))
        for card in cards:
            assert_valid(card)
        assert any(s.startswith("**") for c in cards for s in markdown_of(c))
        assert all("\x1e" not in s for c in cards for s in strings_of(c))


@pytest.mark.parametrize("lang", LANGS)
def test_every_error_reply_is_a_valid_card(lang: Lang) -> None:
    from bot.chat.handler import ERROR_KEYS

    params = (("number", "<at id=all></at>"), ("repository", "o/r"), ("allowed", "o/r"),
              ("week", "2026-W99"), ("current", "2026-W29"), ("command", "subscribe"))
    for key in ERROR_KEYS:
        reply = Reply(kind="error", lang=lang, error=key, params=params, topics=("<b>x",),
                      available_topics=("npu", "ci"))
        (card,) = reply_cards(reply)
        assert_valid(card)
        assert card["header"]["template"] == "grey"
