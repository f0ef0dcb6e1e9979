"""Slack Block Kit rendering: limits, splitting, escaping, golden payloads, catalog.

Every payload is checked three ways: against the limits the fake Slack enforces (50
blocks, 3000 characters per section, the cumulative size behind `msg_blocks_too_long`),
through slack_sdk's own block models, and for markup left whole (no `<url|label>` or
`&amp;` cut in two).
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
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.ext import babel_extract

from adapters.slack.render import (
    MAX_SECTION_CHARS,
    TEMPLATES,
    render_digest_messages,
    render_reply_messages,
    slack_length,
    split_text,
)
from bot.chat.handler import ERROR_KEYS
from bot.engine import build_digest
from bot.i18n import translations
from bot.models import KeyPull, Lang, Period, Reply, Theme
from bot.render.chat import chat_view
from bot.resources import template_dir
from bot.snapshot import read_snapshot
from testkit import EXAMPLES
from testkit.golden import updating
from testkit.slack_checks import (
    assert_chat_form,
    assert_valid,
    example_digest,
    huge_digest,
    markup_problems,
    payloads,
    pull_answer,
    texts_of,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "slack"
LANGS: tuple[Lang, ...] = ("zh", "en")
HOSTILE_TITLES = (
    "<!channel> deploy now",
    "<!here|here> <!everyone> <@U0ADMIN1> <#C0123456>",
    '@all <at user_id="all">all</at> notify',
    "<script>alert(1)</script> <b>bold</b> &amp; &lt;",
    "[click me](javascript:alert(1)) <https://evil.example|github.com>",
    "ctrl\x00chars\x1b[31m\u202e\u200b here",
)


# --- the example digest ------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_example_digest_matches_its_golden_payload(lang: Lang) -> None:
    """The golden file is what Slack receives; it is itself checked against the limits,
    so it cannot freeze a payload Slack would refuse."""
    rendered = payloads(render_digest_messages(example_digest(lang)))
    path = GOLDEN / f"example-digest-{lang}.json"
    if updating():
        path.write_text(json.dumps(rendered, ensure_ascii=False, indent=2) + "\n")
    golden = json.loads(path.read_text())
    for message in golden:
        assert_valid(message)
    assert rendered == golden


@pytest.mark.parametrize("lang", LANGS)
def test_the_example_digest_arrives_as_the_chat_form(lang: Lang) -> None:
    digest = example_digest(lang)
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    assert_chat_form(render_digest_messages(digest), digest, {p.number for p in snapshot.pulls})


def test_the_example_title_with_a_channel_ping_is_inert() -> None:
    digest = example_digest("en")
    # The PR whose title holds `<!channel>` and `<script>` first among the key PRs.
    hostile = [k for k in digest.key_pulls if "<!channel>" in k.title]
    assert hostile
    digest = msgspec.structs.replace(digest, key_pulls=(
        *hostile, *(k for k in digest.key_pulls if k not in hostile)))
    messages = render_digest_messages(digest)
    shown = "\n".join(t for p in payloads(messages) for t in texts_of(p))
    assert "&lt;!channel&gt;" in shown and "&lt;script&gt;" in shown
    assert "<!channel>" not in shown and "<script>" not in shown
    for payload in payloads(messages):
        for block in payload["blocks"]:
            for text in texts_of(block):
                # verbatim: Slack does not turn words like @channel into mentions
                assert "<!" not in text
        for obj in _text_objects(payload["blocks"]):
            if obj["type"] == "mrkdwn":
                assert obj.get("verbatim") is True


def _text_objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if value.get("type") in ("mrkdwn", "plain_text") and "text" in value:
            yield value
        for item in value.values():
            yield from _text_objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _text_objects(item)


def test_a_report_link_becomes_a_button() -> None:
    digest = msgspec.structs.replace(example_digest("zh"),
                                     report_url="https://reports.example/acme/lumen/2026-W29")
    last = render_digest_messages(digest)[-1].as_post()["blocks"][-1]
    assert last["type"] == "actions"
    report = last["elements"][-1]  # after the buttons that run a command
    assert report["url"] == "https://reports.example/acme/lumen/2026-W29"
    assert report["text"]["text"] == translations("zh").gettext("Full report")
    assert report["style"] == "primary"


# --- splitting -----------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_a_huge_digest_is_one_chat_message_or_split_where_slack_allows_less(
        lang: Lang) -> None:
    digest = huge_digest(lang)
    view = chat_view(digest)
    whole = render_digest_messages(digest)
    assert len(whole) == 1
    assert_valid(whole[0])
    # Under a smaller message size, the same chat form continues over several messages.
    messages = render_digest_messages(digest, max_chars=1500)
    assert len(messages) > 2
    for message in messages:
        assert_valid(message)
    shown = "\n".join(t for p in payloads(messages) for t in texts_of(p))
    positions = [shown.index(f"*PR#{r.pull}*") for r in view.risks]
    assert positions == sorted(positions)  # every risk shown, once each, in order
    assert all(shown.count(f"*PR#{r.pull}*") == 1 for r in view.risks)
    for i in range(len(view.suggestions)):
        assert f"{i + 1}. Suggestion {i} &amp; more" in shown
    # Each continuation says which part it is.
    for index, message in enumerate(messages[1:], 2):
        first = message.as_post()["blocks"][0]
        assert first["type"] == "context"
        assert f"{index}" in first["elements"][0]["text"]
        assert f"{len(messages)}" in first["elements"][0]["text"]


def test_a_summary_longer_than_a_section_is_cut_between_links_not_inside() -> None:
    # Chinese has no spaces, so the cut falls between characters; never inside a link.
    link = "<https://github.com/acme/lumen/pull/1201|#1201>"
    text = ("改动" * 7 + link + "&amp;") * 120
    pieces = split_text([text])
    assert len(pieces) > 1
    assert "".join(pieces) == text
    for piece in pieces:
        assert slack_length(piece) <= MAX_SECTION_CHARS
        assert markup_problems(piece) == []


_word = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<>&"), min_size=1,
            max_size=30),
    st.builds(lambda n: f"<https://github.com/o/r/pull/{n}|#{n}>", st.integers(1, 99999)),
    st.sampled_from(["&amp;", "&lt;", "&gt;", "😀", "\n", " "]),
)


@pytest.mark.slow  # many CPU seconds: in `make test-all`, not the quick loop
@settings(max_examples=200, deadline=None)
@given(words=st.lists(_word, min_size=1, max_size=400), limit=st.integers(60, 400))
def test_splitting_never_cuts_markup_and_respects_the_limit(words: list[str], limit: int) -> None:
    text = "".join(words)
    if not text.strip():
        return
    for piece in split_text([text], limit):
        assert slack_length(piece) <= limit
        assert markup_problems(piece) == []


# --- replies --------------------------------------------------------------------------


def _replies(lang: Lang) -> list[Reply]:
    replies = [
        Reply(kind="pull", lang=lang, pull=pull_answer(), mode="risks"),
        Reply(kind="pull", lang=lang, pull=pull_answer(risks=0), mode="summary"),
        Reply(kind="topics", lang=lang, topics=("npu",), available_topics=("npu", "rollout"),
              params=(("repository", "acme/lumen"),)),
        Reply(kind="subscribed", lang=lang, topics=("npu", "rollout")),
        Reply(kind="unsubscribed", lang=lang, topics=("npu",)),
        Reply(kind="help", lang=lang, params=(("repository", "acme/lumen"),)),
        Reply(kind="help", lang=lang, params=(("text", "<!channel> what?"),)),
    ]
    replies += [Reply(kind="error", lang=lang, error=key,
                      params=(("number", "99"), ("repository", "acme/lumen"),
                              ("allowed", "acme/lumen"), ("week", "2026-W60"),
                              ("current", "2026-W30"), ("command", "subscribe")),
                      topics=("gpu",), available_topics=("npu",))
                for key in ERROR_KEYS]
    return replies


@pytest.mark.parametrize("lang", LANGS)
def test_every_reply_kind_renders_to_valid_blocks(lang: Lang) -> None:
    for reply in _replies(lang):
        messages = render_reply_messages(reply)
        assert messages, reply
        for message in messages:
            assert_valid(message)
            assert message.response_type == (
                "ephemeral" if reply.kind in ("help", "error") else "in_channel")
        shown = "\n".join(t for m in messages for t in texts_of(m.as_post()))
        assert "<!" not in shown and "<@" not in shown, reply
        if lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", shown), reply


def test_a_pull_reply_has_a_button_to_the_pull_and_escapes_its_title() -> None:
    for title in HOSTILE_TITLES:
        [message] = render_reply_messages(
            Reply(kind="pull", lang="en", pull=pull_answer(title), mode="summary"))
        assert_valid(message)
        [actions] = [b for b in message.as_post()["blocks"] if b["type"] == "actions"]
        opens = actions["elements"][0]
        assert opens["url"] == "https://github.com/acme/lumen/pull/1206"
        assert opens["text"]["text"] == "Open #1206"
        shown = "\n".join(texts_of(message.as_post()))
        assert "<!" not in shown and "<at" not in shown and "<script" not in shown
        assert "\x00" not in shown and "\x1b" not in shown


def test_each_error_reads_differently() -> None:
    sentences = {
        "\n".join(texts_of(render_reply_messages(r)[0].as_post()["blocks"]))
        for r in _replies("en") if r.kind == "error"
    }
    assert len(sentences) == len(ERROR_KEYS)


def test_a_reply_kind_slack_cannot_send_fails_loudly() -> None:
    with pytest.raises(ValueError):
        render_reply_messages(Reply(kind="digest", lang="en"))


def test_hostile_titles_in_a_digest_are_inert() -> None:
    base = example_digest("en")
    now = datetime(2026, 7, 13, tzinfo=UTC)
    digest = msgspec.structs.replace(
        base,
        period=Period(since=now, until=now + timedelta(days=7)),
        key_pulls=tuple(KeyPull(number=4000 + i, title=t, short_title=t, summary=t,
                                url=f"https://github.com/acme/lumen/pull/{4000 + i}")
                        for i, t in enumerate(HOSTILE_TITLES)),
        themes=(Theme(title="<!channel> theme", pulls=tuple(4000 + i for i in range(6))),),
        notes=("<!here> note",),
    )
    for message in render_digest_messages(digest):
        assert_valid(message)
        for text in texts_of(message.as_post()):
            assert "<!" not in text and "<at" not in text and "<script" not in text
            assert "<https://evil" not in text


# --- the catalog -----------------------------------------------------------------------


def _slack_messages() -> list[tuple[str | None, str, str | None]]:
    options = {"extensions": "jinja2.ext.do,jinja2.ext.loopcontrols",
               "trim_blocks": "true", "lstrip_blocks": "true"}
    found: set[tuple[str | None, str, str | None]] = set()
    # Slack's own templates, and the core's that its App Home tab and link previews show.
    shown = [*sorted((TEMPLATES / "slack").glob("*.j2")),
             *(template_dir() / "document" / name for name in ("overview.j2", "preview.j2"))]
    for path in shown:
        with path.open("rb") as handle:
            for _, function, message, _ in babel_extract(
                    handle, ["_", "gettext", "ngettext", "pgettext"], [], options):
                parts = [message] if isinstance(message, str) else list(message or ())
                texts = [str(p) for p in parts if p is not None]
                if function == "pgettext":
                    found.add((texts[0], texts[1], None))
                elif function == "ngettext":
                    found.add((None, texts[0], texts[1]))
                else:
                    found.add((None, texts[0], None))
    return sorted(found, key=str)


SLACK_MESSAGES = _slack_messages()


@pytest.mark.parametrize(("context", "msgid", "plural"), SLACK_MESSAGES,
                         ids=[m[1] for m in SLACK_MESSAGES])
def test_every_slack_message_has_a_chinese_translation(
    context: str | None, msgid: str, plural: str | None
) -> None:
    catalog = translations("zh", (TEMPLATES,))
    if context is not None:
        text = catalog.pgettext(context, msgid)
    elif plural is not None:
        text = catalog.ngettext(msgid, plural, 1)
    else:
        text = catalog.gettext(msgid)
    assert text != msgid or not re.search(r"[A-Za-z]{2}", re.sub(r"%\(\w+\)s", "", msgid))
    assert sorted(re.findall(r"%\(\w+\)s", text)) == sorted(re.findall(r"%\(\w+\)s", msgid))


# --- real data --------------------------------------------------------------------------


REAL_WEEKS = {
    "verl-2026-07.json": ("verl-project/verl", {"npu": ("npu", "ascend")}),
    "vllm-2026-W29.json": ("vllm-project/vllm", {}),
}


@pytest.mark.realdata
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", sorted(REAL_WEEKS))
def test_real_weeks_render_within_the_limits_with_only_their_own_pull_numbers(
    shared_data: Path, name: str, lang: Lang
) -> None:
    from bot.config import RepoConfig, TopicRule

    repository, topics = REAL_WEEKS[name]
    snapshot = read_snapshot(shared_data / name)
    repo_config = RepoConfig(timezone="Asia/Shanghai", topics={
        topic: TopicRule(keywords=words) for topic, words in topics.items()})
    digest = build_digest(snapshot, "2026-W29", repo_config=repo_config, lang=lang)
    shown = assert_chat_form(render_digest_messages(digest), digest,
                             {p.number for p in snapshot.pulls})
    assert repository in shown
