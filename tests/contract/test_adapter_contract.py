"""The one adapter contract, the registry that lists the platforms, and the shared inbox.

The registry is the only list of platforms: the core modules that meet the adapters
name none, and importing the registry loads no SDK. Every adapter declares what it can
do (`dedupe_window`, `complete_delivery`) instead of being probed. The inbox answers
every question once, in one language rule, and never raises.
"""

from __future__ import annotations

import inspect
import logging
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.console import ConsoleAdapter
from adapters.poster import AdapterPoster
from adapters.registry import LOCAL_PLATFORMS, PLATFORM_SCHEMAS, PLATFORMS, platform_spec
from bot.chat.inbound import Inbox, Question
from bot.config import ChannelConfig, Config, parse_config
from bot.models import Admission, Command, Digest, Reply
from testkit.clock import VirtualClock
from testkit.code_words import code_words

ROOT = Path(__file__).resolve().parents[2]
CHANNEL = "C_LISTED"
# Modules of the core that meet the adapters only through the registry and the contract.
PLATFORM_NEUTRAL = ("bot/web/services.py", "adapters/poster.py", "bot/chat/inbound.py",
                    "bot/delivery/schedule.py", "bot/digests.py", "bot/web/metrics.py")
CONTRACT = ("start", "routes", "status", "send_reply", "post_digest", "complete_delivery",
            "complete_reply", "close")


def make_config(lang: str = "en") -> Config:
    return parse_config({
        "repos": {"acme/lumen": {"timezone": "Asia/Shanghai"}},
        "channels": [{"platform": "slack", "id": CHANNEL, "repo": "acme/lumen",
                      "lang": lang}],
    })


# --- the registry ----------------------------------------------------------------------


def test_the_registry_lists_every_platform_a_channel_may_name() -> None:
    names = [spec.name for spec in PLATFORMS]
    assert len(names) == len(set(names))
    assert set(names) | LOCAL_PLATFORMS == set(PLATFORM_SCHEMAS)
    assert platform_spec("console") is None and platform_spec("irc") is None


@pytest.mark.parametrize("module", PLATFORM_NEUTRAL)
def test_the_core_probes_no_capability(module: str) -> None:
    """What a platform can do is declared in the contract; the core never asks an adapter
    object what it has (which platforms the core names: tests/test_layering.py)."""
    words = code_words((ROOT / module).read_text())
    assert not re.search(r"\b(getattr|hasattr|inspect)\b", words), module


def test_importing_the_registry_loads_no_sdk() -> None:
    probe = ("import sys, adapters.registry\n"
             "print(sorted(m for m in ('slack_bolt', 'slack_sdk', 'telegram', 'lark_oapi')"
             " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_unconfigured_platforms_name_the_missing_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = make_config()
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "TELEGRAM_BOT_TOKEN",
                 "TELEGRAM_WEBHOOK_SECRET", "FEISHU_APP_ID", "FEISHU_APP_SECRET"):
        monkeypatch.delenv(name, raising=False)
    for spec in PLATFORMS:
        status = spec.unconfigured_status(config)
        assert not spec.has_credentials(config)
        assert status["platform"] == spec.name and status["configured"] is False
        assert status["missing_env"]


# --- the contract ----------------------------------------------------------------------


@pytest.mark.parametrize("spec", PLATFORMS, ids=lambda spec: spec.name)
def test_each_adapter_declares_the_contract(spec: Any) -> None:
    adapter_class = spec.load()
    assert adapter_class.platform == spec.name
    assert adapter_class.max_message_chars > 0
    window = adapter_class.dedupe_window
    assert window is None or window > timedelta(0)
    for name in CONTRACT:
        assert callable(getattr(adapter_class, name)), name
    keyword = inspect.signature(adapter_class.post_digest).parameters["idempotency_key"]
    assert keyword.kind is inspect.Parameter.KEYWORD_ONLY and keyword.default is None


def test_feishu_drops_a_re_send_for_an_hour_and_slack_and_telegram_do_not() -> None:
    windows = {spec.name: spec.load().dedupe_window for spec in PLATFORMS}
    assert {name: windows[name] for name in ("slack", "telegram", "feishu")} == {
        "slack": None, "telegram": None, "feishu": timedelta(hours=1)}


def test_the_console_keeps_the_contract_too() -> None:
    for name in CONTRACT:
        assert callable(getattr(ConsoleAdapter, name)), name
    assert ConsoleAdapter.dedupe_window is None


class _Adapter:
    """A platform as the poster sees it; `found` is what `complete_delivery` answers."""

    platform = "slack"
    max_message_chars = 100

    def __init__(self, window: timedelta | None, found: list[str] | None) -> None:
        self.dedupe_window = window
        self.found = found
        self.keys: list[str | None] = []

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        self.keys.append(idempotency_key)
        return ["m1"]

    async def complete_delivery(self, channel_id: str, digest: Digest, *,
                                idempotency_key: str, since: datetime) -> list[str] | None:
        self.keys.append(idempotency_key)
        return self.found


async def test_the_poster_uses_what_the_adapter_declares() -> None:
    config = parse_config({
        "repos": {"acme/lumen": {}},
        "channels": [{"platform": "slack", "id": "C1", "repo": "acme/lumen"},
                     {"platform": "feishu", "id": "oc_1", "repo": "acme/lumen"},
                     {"platform": "telegram", "id": "-1", "repo": "acme/lumen"}],
    })
    slack_channel, feishu_channel, telegram_channel = config.channels
    slack, feishu = _Adapter(None, ["ts-1", "ts-2"]), _Adapter(timedelta(minutes=5), None)
    poster = AdapterPoster({"slack": slack, "feishu": feishu})  # type: ignore[dict-item]
    digest: Any = object()
    assert await poster.post_digest(feishu_channel, digest, delivery_key="k1") == ["m1"]
    assert poster.idempotency_window(feishu_channel) == timedelta(minutes=5)
    assert poster.idempotency_window(slack_channel) is None
    assert poster.idempotency_window(telegram_channel) is None
    since = datetime(2026, 7, 20, tzinfo=UTC)
    assert await poster.complete_delivery(slack_channel, digest, delivery_key="k2",
                                          since=since) == ["ts-1", "ts-2"]
    assert await poster.complete_delivery(feishu_channel, digest, delivery_key="k3",
                                          since=since) is None
    assert await poster.complete_delivery(telegram_channel, digest, delivery_key="k4",
                                          since=since) is None
    assert feishu.keys == ["k1", "k3"] and slack.keys == ["k2"]


# --- the inbox -------------------------------------------------------------------------


class _Handler:
    def __init__(self, fail: bool = False, config: Config | None = None) -> None:
        self.fail = fail
        self.config = config or make_config()
        self.asked: list[tuple[Command, ChannelConfig | None, str | None]] = []

    async def chat_channel(self, chat: str) -> ChannelConfig | None:
        return self.config.channel(chat)

    async def handle(self, command: Command, *, channel: ChannelConfig | None,
                     user: str | None = None, asker: Any = None) -> Reply:
        self.asked.append((command, channel, user))
        if self.fail:
            raise RuntimeError("handler broke")
        return Reply(kind="help", lang=command.lang)


class _Seen:
    def __init__(self, broken: bool = False) -> None:
        self.broken = broken
        self.keys: set[tuple[str, str]] = set()
        self.done: set[tuple[str, str]] = set()
        self.elsewhere_for = 0  # admissions that find it begun by another process

    async def first(self, platform: str, key: str) -> Admission:
        if self.broken:
            raise ConnectionError("redis is away")
        if self.elsewhere_for > 0:
            self.elsewhere_for -= 1
            return "later"
        if (platform, key) in self.keys:
            return "repeat"
        self.keys.add((platform, key))
        return "answer"

    async def answered(self, platform: str, key: str) -> None:
        self.done.add((platform, key))

    async def unanswered(self, platform: str, key: str) -> None:
        self.keys.discard((platform, key))


def question(text: str = "#7035", *, channel: str = CHANNEL, key: str | None = "ev-1",
             **fields: Any) -> Question:
    return Question(platform="slack", channel_id=channel, user_id="U1", text=text,
                    delivery_key=key, **fields)


async def test_a_delivery_is_answered_once() -> None:
    handler = _Handler()
    inbox = Inbox(handler, _Seen(), default_lang="en")
    assert await inbox.answer(question()) is not None
    assert await inbox.answer(question()) is None
    assert await inbox.answer(question(key="ev-2")) is not None
    assert await inbox.answer(question(key=None)) is not None
    assert await inbox.answer(question(key=None)) is not None
    assert len(handler.asked) == 4  # ev-1 once, ev-2, and both without a key


async def test_a_delivery_counts_as_answered_only_once_its_answer_was_sent() -> None:
    handler = _Handler()
    seen = _Seen()
    inbox = Inbox(handler, seen, default_lang="en")
    sent: list[Reply] = []

    async def refused(reply: Reply) -> None:
        raise ConnectionError("the platform is away")

    async def taken(reply: Reply) -> None:
        sent.append(reply)

    with pytest.raises(ConnectionError):
        await inbox.answer(question(), send=refused)
    assert seen.done == set()
    assert await inbox.answer(question(), send=taken) is not None  # the retry answers
    assert seen.done == {("slack", "ev-1")} and len(sent) == 1
    assert await inbox.answer(question(), send=taken) is None  # and then it is a repeat
    assert len(sent) == 1 and len(handler.asked) == 2


async def test_without_the_dedupe_store_the_question_is_answered_anyway(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handler = _Handler()
    inbox = Inbox(handler, _Seen(broken=True), default_lang="en")
    with caplog.at_level(logging.WARNING):
        reply = await inbox.answer(question())
    assert reply is not None and reply.kind == "help" and len(handler.asked) == 1
    assert "dedupe unavailable" in caplog.text


async def test_a_delivery_held_elsewhere_is_waited_for_when_nobody_resends_it() -> None:
    handler, seen = _Handler(), _Seen()
    clock = VirtualClock()
    inbox = Inbox(handler, seen, default_lang="en", later_waits=(1.0, 2.0, 4.0), clock=clock)
    seen.elsewhere_for = 2  # the other process's claim is taken over on the third try
    assert await inbox.answer(question()) is not None
    assert len(handler.asked) == 1 and seen.done == {("slack", "ev-1")}
    assert clock.slept == [1.0, 2.0]


async def test_a_delivery_held_elsewhere_too_long_is_left_to_that_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handler, seen = _Handler(), _Seen()
    clock = VirtualClock()
    inbox = Inbox(handler, seen, default_lang="en", later_waits=(1.0, 2.0), clock=clock)
    seen.elsewhere_for = 3
    with caplog.at_level(logging.WARNING):
        assert await inbox.answer(question()) is None
    assert handler.asked == [] and "still held by another process" in caplog.text
    assert clock.slept == [1.0, 2.0]


async def test_an_admitted_delivery_is_not_admitted_twice() -> None:
    handler, seen = _Handler(), _Seen()
    inbox = Inbox(handler, seen, default_lang="en")
    seen.elsewhere_for = 1
    assert await inbox.admit(question()) == "later"  # the webhook asks for it again
    assert await inbox.admit(question()) == "answer"
    assert await inbox.answer(question(), admitted=True) is not None
    assert await inbox.admit(question()) == "repeat"
    assert len(handler.asked) == 1


@pytest.mark.parametrize(
    ("channel", "user_lang", "default", "lang"),
    [
        (CHANNEL, None, "en", "zh"),  # a listed channel speaks its `lang`
        (CHANNEL, "en", "en", "zh"),  # ... whatever the user's platform language
        ("C_OTHER", None, "en", "en"),  # an unlisted chat: the platform's default
        ("C_OTHER", None, "zh", "zh"),
        ("C_OTHER", "zh", "en", "zh"),  # ... unless the platform knows the user's
    ],
)
async def test_one_language_rule(channel: str, user_lang: Any, default: Any, lang: str) -> None:
    handler = _Handler(config=make_config(lang="zh"))
    inbox = Inbox(handler, _Seen(), default_lang=default)
    await inbox.answer(question(channel=channel, user_lang=user_lang))
    command, seen_channel, user = handler.asked[0]
    assert command.lang == lang and user == "U1"
    assert (seen_channel is not None) == (channel == CHANNEL)


async def test_text_speaks_for_itself_and_a_fixed_verb_does_not() -> None:
    handler = _Handler(config=make_config(lang="zh"))
    inbox = Inbox(handler, _Seen(), default_lang="en")
    await inbox.answer(question("risks for #7035", key="a"))
    await inbox.answer(question("/risks 7035", key="b", fixed_verb=True))
    await inbox.answer(question("prdigest summary #6974", key="c"), bot_names=("prdigest",))
    kinds = [(command.kind, command.lang) for command, _, _ in handler.asked]
    assert kinds == [("risks", "en"), ("risks", "zh"), ("summary", "en")]


async def test_a_failing_handler_becomes_the_internal_error_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    inbox = Inbox(_Handler(fail=True, config=make_config(lang="zh")), _Seen(), default_lang="en")
    with caplog.at_level(logging.ERROR):
        reply = await inbox.answer(question())
    assert reply is not None
    assert (reply.kind, reply.error, reply.lang) == ("error", "internal-error", "zh")
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failures) == 1 and "handler broke" in caplog.text
