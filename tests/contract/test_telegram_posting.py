"""Telegram outbound against the fake Bot API: the weekly digest in as few messages as the
chat budget allows, hostile titles inert, and every delivery error Telegram gives
reported without the token."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from adapters.base import DeliveryError
from adapters.telegram.render import render_digest_html
from bot.config import RepoConfig, TopicRule
from bot.engine import build_digest
from bot.models import KeyPull, Reply
from bot.render import render_digest
from bot.render.chat import CHAT_CEILING, chat_view
from bot.snapshot import read_snapshot
from bot.store.coordination import Coordination
from testkit.clock import VirtualClock
from testkit.fakes.telegram import (
    FakeTelegram,
    group_chat,
    message_update,
    parse_html,
    utf16_length,
)
from testkit.telegram_bot import (
    GROUP,
    SECRET,
    SMALL_MESSAGES,
    SNAPSHOT,
    plain_of,
    post_update,
    running,
    settle,
    wait_sent,
)
from testkit.telegram_bot import (
    example_digest as digest,
)

# --- the weekly digest ------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_example_digest_arrives_whole_in_one_message_within_the_chat_budget(
    tg: FakeTelegram, port: Coordination, lang: str
) -> None:
    weekly = msgspec.structs.replace(digest(lang), report_url="https://reports.example/w29")
    async with running(tg, port, start=False) as (adapter, _):
        ids = await adapter.post_digest(str(GROUP), weekly)
    sent = tg.sent()
    assert len(sent) == len(ids) == len(tg.calls("sendMessage")) == 1
    fields = sent[0]
    assert fields["chat_id"] == str(GROUP)
    assert fields["parse_mode"] == "HTML"
    assert json.loads(fields["link_preview_options"]) == {"is_disabled": True}
    text, _ = parse_html(fields["text"])  # raises on anything Telegram would refuse
    # The chat form: within the chat budget (not Telegram's 4096), the report link on top.
    assert 0 < utf16_length(text) <= CHAT_CEILING
    assert "https://reports.example/w29" in "\n".join(text.splitlines()[:3])
    assert text.split() == plain_of(render_digest_html(weekly)).split()
    # Every PR it names exists and is in the full report, which holds the rest.
    numbers = {int(n) for n in re.findall(r"#(\d+)", text)}
    assert numbers <= {pull.number for pull in SNAPSHOT.pulls}
    report = render_digest(weekly, "markdown")
    assert numbers <= {int(n) for n in re.findall(r"#(\d+)", report)}
    assert {p.number for p in weekly.pulls} <= {int(n) for n in re.findall(r"#(\d+)", report)}
    quick = chat_view(weekly).quick
    assert quick and {k.number for k in quick} <= numbers
    # The key PRs of the quick view link from their lines, so the keyboard under the
    # message holds only the buttons that act and the report.
    for k in quick:
        assert f'<a href="https://github.com/acme/lumen/pull/{k.number}"><b>#{k.number} ' \
            in fields["text"]
    keyboard = json.loads(fields["reply_markup"])["inline_keyboard"]
    buttons = [b for row in keyboard for b in row]
    assert [b["url"] for b in buttons if "url" in b] == ["https://reports.example/w29"]
    assert [b for b in buttons if "url" not in b] and \
        all(b.get("callback_data") for b in buttons if "url" not in b)


async def test_a_digest_in_several_messages_keeps_every_word_once(
    tg: FakeTelegram, port: Coordination, small_messages: None
) -> None:
    weekly = digest("en")
    async with running(tg, port, start=False) as (adapter, _):
        await adapter.post_digest(str(GROUP), weekly)
    sent = tg.sent()
    assert len(sent) == 2
    for fields in sent:
        assert 0 < utf16_length(plain_of(fields["text"])) <= SMALL_MESSAGES
    whole = plain_of(render_digest_html(weekly))
    assert " ".join(plain_of(f["text"]) for f in sent).split() == whole.split()
    assert "reply_markup" in sent[-1] and "reply_markup" not in sent[0]


async def test_a_hostile_title_reaches_telegram_inert(tg: FakeTelegram, port: Coordination) -> None:
    weekly = digest("en")
    hostile = KeyPull(
        number=1201, url="https://github.com/acme/lumen/pull/1201", type="feat",
        title='<!channel> @all <at user_id="all"></at> <b>x</b> [a](javascript:alert(1))',
        short_title='<!here> @all <at user_id="all"></at> <script>x</script>\x07 & co',
        summary="Fixes a < b && c > d; see [docs](tg://user?id=1) @channel\u202e",
    )
    weekly = msgspec.structs.replace(weekly, key_pulls=(hostile, *weekly.key_pulls[1:]))
    async with running(tg, port, start=False) as (adapter, _):
        await adapter.post_digest(str(GROUP), weekly)
    texts = [f["text"] for f in tg.sent()]
    line = ('• <a href="https://github.com/acme/lumen/pull/1201"><b>#1201 &lt;!here&gt; '
            '@\u2060all &lt;at user_id="all"&gt;&lt;/at&gt; &lt;script&gt;x&lt;/script&gt; '
            "&amp; co</b></a>: Fixes a &lt; b &amp;&amp; c &gt; d; "
            "see [docs](tg://user?id=1) @\u2060channel")
    assert any(line in text for text in texts)
    plain = " ".join(plain_of(text) for text in texts)
    assert not re.search(r"@(all|here|channel)\b", plain)  # no mention Telegram could detect
    assert "\x07" not in plain and "\u202e" not in plain
    targets = re.findall(r'href="([^"]*)"', " ".join(texts))
    assert targets and all(t.startswith("https://github.com/acme/lumen/") for t in targets)


@pytest.mark.realdata
async def test_a_week_of_real_prs_arrives_in_one_message_within_the_chat_budget(
    tg: FakeTelegram, port: Coordination, shared_data: Path
) -> None:
    for name in ("verl-2026-07.json", "vllm-2026-W29.json"):
        snapshot = read_snapshot(shared_data / name)
        config = RepoConfig(timezone="Asia/Shanghai",
                            topics={"npu": TopicRule(keywords=("npu", "ascend"))})
        weekly = build_digest(snapshot, "2026-W29", repo_config=config, lang="zh")
        before = len(tg.sent())
        async with running(tg, port, start=False) as (adapter, _):
            await adapter.post_digest(str(GROUP), weekly)
        sent = tg.sent()[before:]
        assert len(sent) == 1
        posted = plain_of(sent[0]["text"])
        assert utf16_length(posted) <= CHAT_CEILING
        assert sent[0]["text"].startswith("<b>")
        numbers = {int(n) for n in re.findall(r"#(\d+)", posted)}
        assert numbers <= {p.number for p in snapshot.pulls}
        assert numbers <= {int(n) for n in re.findall(r"#(\d+)",
                                                    render_digest(weekly, "markdown"))}


# --- delivery errors ----------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
@pytest.mark.parametrize("timedelta_env", [True, False])
async def test_flood_control_is_waited_out_and_the_message_delivered(
    tg: FakeTelegram, port: Coordination, monkeypatch: pytest.MonkeyPatch, timedelta_env: bool
) -> None:
    """`retry_after` is a timedelta with PTB_TIMEDELTA=true and seconds without it."""
    if timedelta_env:
        monkeypatch.setenv("PTB_TIMEDELTA", "true")
    else:
        monkeypatch.delenv("PTB_TIMEDELTA", raising=False)
    tg.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    async with running(tg, port, start=False) as (adapter, _):
        ids = await adapter.send_reply(str(GROUP), Reply(kind="help", lang="en"))
    calls = tg.calls("sendMessage")
    assert [c.status for c in calls] == [429, 200]
    assert calls[0].fields == calls[1].fields
    assert len(ids) == 1


async def test_flood_control_on_a_call_that_posts_nothing_is_waited_out_on_the_clock(
    tg: FakeTelegram, port: Coordination
) -> None:
    """A method outside the pacing lanes (the command menu at start) waits out the
    `retry_after` itself, on the adapter's clock, and goes again."""
    tg.fail_next("setMyCommands", 429, "Too Many Requests: retry after 5", retry_after=5)
    clock = VirtualClock()
    async with running(tg, port, clock=clock):
        pass
    assert [c.status for c in tg.calls("setMyCommands")] == [429, 200, 200]
    assert 5 <= sum(clock.slept) < 6


ERRORS = [
    pytest.param(400, "Bad Request: chat not found", {}, 1, "Chat not found", id="400"),
    pytest.param(403, "Forbidden: bot was kicked from the supergroup chat", {}, 1,
                 "bot was kicked", id="403"),
    pytest.param(429, "Too Many Requests: retry after 1", {"retry_after": 1, "times": 3}, 3,
                 "Flood control exceeded", id="429-retries-exhausted"),
    pytest.param(429, "Too Many Requests: retry after 3600", {"retry_after": 3600}, 1,
                 "Flood control exceeded", id="429-wait-too-long"),
    pytest.param(500, "Internal Server Error", {}, 1, "Internal Server Error", id="500"),
    pytest.param(502, "Bad Gateway", {}, 1, "Bad Gateway", id="502"),
]


@pytest.mark.parametrize(("status", "description", "options", "attempts", "reason"), ERRORS)
async def test_a_refused_digest_raises_delivery_error_without_secrets(
    tg: FakeTelegram, port: Coordination, status: int, description: str,
    options: dict[str, Any], attempts: int, reason: str, small_messages: None,
) -> None:
    tg.fail_next("sendMessage", status, description, **options)
    async with running(tg, port, start=False) as (adapter, _):
        with pytest.raises(DeliveryError) as raised:
            await adapter.post_digest(str(GROUP), digest("en"))
    message = str(raised.value)
    assert reason in message
    assert "0 of 2 messages" in message
    assert tg.token not in message and SECRET not in message
    assert len(tg.calls("sendMessage")) == attempts


async def test_a_failure_midway_says_how_much_was_posted(
    tg: FakeTelegram, port: Coordination, small_messages: None
) -> None:
    tg.fail_next("sendMessage", 403, "Forbidden: bot was kicked from the group chat", after=1)
    async with running(tg, port, start=False) as (adapter, _):
        with pytest.raises(DeliveryError, match="1 of 2 messages"):
            await adapter.post_digest(str(GROUP), digest("en"))
    assert [c.status for c in tg.calls("sendMessage")] == [200, 403]


async def test_a_group_that_became_a_supergroup_still_gets_its_digest(
    tg: FakeTelegram, port: Coordination
) -> None:
    tg.fail_next("sendMessage", 400, "Bad Request: group chat was upgraded to a supergroup chat",
                 parameters={"migrate_to_chat_id": -1009999})
    async with running(tg, port, start=False) as (adapter, _):
        ids = await adapter.post_digest("-4001", digest("en"))
    chats = [c.fields["chat_id"] for c in tg.calls("sendMessage")]
    assert chats[0] == "-4001" and set(chats[1:]) == {"-1009999"}
    assert len(ids) == len(chats) - 1


async def test_a_wrong_bot_token_fails_start_without_showing_it(
    tg: FakeTelegram, port: Coordination
) -> None:
    with pytest.raises(DeliveryError) as raised:
        async with running(tg, port, token="999:WRONG-token"):
            pass
    # PTB's own message quotes the token; ours does not.
    assert "999:WRONG-token" not in str(raised.value)
    assert "rejected" in str(raised.value)


async def test_an_unreachable_bot_api_makes_telegram_deliver_again(
    tg: FakeTelegram, port: Coordination
) -> None:
    tg.fail_next("getMe", 502, "Bad Gateway")
    async with running(tg, port, start=False) as (_, http):
        first = await post_update(http, message_update(40, "/help", chat=group_chat(GROUP)))
        second = await post_update(http, message_update(40, "/help", chat=group_chat(GROUP)))
        await wait_sent(tg)
        await settle()
    assert (first.status_code, second.status_code) == (503, 200)
    assert len(tg.calls("sendMessage")) == 1


async def test_request_logs_never_show_the_token(
    tg: FakeTelegram, port: Coordination, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        async with running(tg, port, start=False) as (adapter, _):
            await adapter.send_reply(str(GROUP), Reply(kind="help", lang="en"))
    assert any("sendMessage" in record.getMessage() for record in caplog.records)
    assert not any(tg.token in record.getMessage() for record in caplog.records)
