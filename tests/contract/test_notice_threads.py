"""Notices in the thread of the week's digest, on each platform as it receives them.

The real adapters post a digest to their platform's fake, then a merged-PR notice with
the digest's first message as the thread: Slack gets `thread_ts`, Telegram
`reply_parameters`, Feishu the reply API with `reply_in_thread`, each naming that
message. A parent deleted (recalled) before the notice is posted once at the top level,
never twice and never lost. A batch of notices is one message in the thread, in the
channel's language, every title escaped for the platform.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
import pytest_asyncio

from adapters.base import ChatAdapter, ParentGone
from adapters.poster import AdapterNotices
from adapters.slack.adapter import SlackAdapter
from adapters.slack.settings import SlackSecrets, SlackSettings
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.settings import TelegramSecrets, TelegramSettings
from bot.config import Config, load_config
from bot.delivery.notices import MergeNotifier
from bot.digests import Digests
from bot.engine import build_digest
from bot.models import PullAnswer, Reply
from bot.pacing import LocalPacer
from bot.snapshot import read_snapshot
from testkit import EXAMPLES
from testkit.clock import VirtualClock
from testkit.coordination import local_claims
from testkit.fakes.feishu import FakeFeishu
from testkit.fakes.slack import BOT_TOKEN, FakeSlack
from testkit.fakes.telegram import TOKEN, FakeTelegram
from testkit.feishu_bot import feishu_adapter

CONFIG = load_config(EXAMPLES / "prdigest.toml")
HOSTILE = '<b>x</b> *now* [click](http://evil) <at user_id="all">all</at> & `tick`'
CHANNELS = {"slack": "C0123456", "telegram": "-1001234567890", "feishu": "oc_0123456789abcdef"}


class NoHandler:
    async def chat_channel(self, chat: str) -> None:
        return None

    async def handle(self, command: Any, **_: Any) -> Reply:
        raise AssertionError("no question is asked here")


def notice(number: int, title: str, lang: str = "en") -> Reply:
    pull = PullAnswer(repository="acme/lumen", number=number, title=title,
                      url=f"https://github.com/acme/lumen/pull/{number}", state="merged",
                      summary="", risks=(), topics=("npu",))
    return Reply(kind="pull", lang=lang, mode="merged", pull=pull,  # type: ignore[arg-type]
                 topics=("npu",), params=(("author", "ann"),))


@dataclass
class Platform:
    """One platform's fake and real adapter, and how to read the fake."""

    name: str
    fake: Any
    adapter: ChatAdapter

    @property
    def channel(self) -> str:
        return CHANNELS[self.name]

    def replies_under(self, parent: str) -> list[str]:
        """The text of each message the platform shows under `parent`."""
        if self.name == "slack":
            return [json.dumps(p, ensure_ascii=False) for p in self.fake.posted()
                    if p.get("thread_ts") == parent]
        if self.name == "telegram":
            return [f["text"] for f in self.fake.replies_to(int(parent))]
        return [c.content for c in self.fake.thread_replies(parent) if c.in_thread]

    def top_level(self) -> list[str]:
        """The text of each message in the channel itself (not in a thread)."""
        if self.name == "slack":
            return [json.dumps(p, ensure_ascii=False) for p in self.fake.posted()
                    if not p.get("thread_ts")]
        if self.name == "telegram":
            return [r.fields["text"] for r in self.fake.calls("sendMessage")
                    if r.accepted and r.reply_to is None]
        return [c.content for c in self.fake.sent_cards() if c.endpoint == "create"]

    def delete(self, message_id: str) -> None:
        if self.name == "slack":
            self.fake.delete_message(message_id)
        elif self.name == "telegram":
            self.fake.delete_message(self.channel, int(message_id))
        else:
            self.fake.recall(message_id)


def virtual_pacer() -> LocalPacer:
    """Turns on a virtual clock: a chat's one message a second costs no wall time."""
    return LocalPacer(VirtualClock())


def _start(name: str, stack: ExitStack, config: Config) -> Platform:
    if name == "slack":
        slack = stack.enter_context(FakeSlack())
        return Platform(name, slack, SlackAdapter(
            config, NoHandler(), local_claims(), SlackSecrets(BOT_TOKEN),
            SlackSettings(api_url=slack.base_url), outbound_only=True, pacer=virtual_pacer()))
    if name == "telegram":
        tg = stack.enter_context(FakeTelegram())
        return Platform(name, tg, TelegramAdapter(
            config, NoHandler(), local_claims(), TelegramSecrets(TOKEN),
            TelegramSettings(api_url=tg.base_url), outbound_only=True, pacer=virtual_pacer()))
    feishu = stack.enter_context(FakeFeishu(app_id=f"cli_{uuid.uuid4().hex[:16]}",
                                            app_secret="s"))
    return Platform(name, feishu, feishu_adapter(config, NoHandler(), local_claims(),
                                                 app_id=feishu.app_id, app_secret="s",
                                                 domain=feishu.base_url, bot_open_id="ou_fake_bot",
                                                 outbound_only=True, pacer=virtual_pacer()))


@pytest.fixture(params=["slack", "telegram", "feishu"])
def platform_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture(loop_scope="function")
async def platform(platform_name: str) -> AsyncIterator[Platform]:
    with ExitStack() as stack:
        started = _start(platform_name, stack, CONFIG)
        yield started
        await started.adapter.close()


async def _digest_posted(platform: Platform) -> str:
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    digest = build_digest(snapshot, "2026-W29", repo_config=CONFIG.repo("acme/lumen"),
                          lang="en")
    ids = await platform.adapter.post_digest(platform.channel, digest)
    return ids[0]


async def test_a_notice_in_the_thread_names_the_digest_message(platform: Platform) -> None:
    parent = await _digest_posted(platform)
    before = len(platform.top_level())
    await platform.adapter.send_reply(platform.channel, notice(1212, "fix: HCCL timeout"),
                                      thread=parent, idempotency_key="k-1212")
    [shown] = platform.replies_under(parent)
    assert "1212" in shown and "HCCL timeout" in shown
    assert len(platform.top_level()) == before  # in the thread, not in the channel


async def test_a_reply_under_a_deleted_digest_is_refused_with_nothing_posted(
        platform: Platform) -> None:
    parent = await _digest_posted(platform)
    platform.delete(parent)
    before = len(platform.top_level())
    if platform.name == "telegram":
        # Telegram itself posts it unattached (allow_sending_without_reply).
        await platform.adapter.send_reply(platform.channel, notice(1212, "fix"), thread=parent)
        assert len(platform.top_level()) == before + 1
        return
    with pytest.raises(ParentGone):
        await platform.adapter.send_reply(platform.channel, notice(1212, "fix"), thread=parent)
    assert len(platform.top_level()) == before
    assert platform.replies_under(parent) == []


class FixedParent:
    """The ledger's answer, fixed: the digest message of the week."""

    def __init__(self, parent: str | None) -> None:
        self.parent_id = parent

    async def parent(self, channel: Any, at: datetime) -> str | None:
        return self.parent_id


def _notifier(platform: Platform, parent: str | None) -> tuple[MergeNotifier, Any]:
    channel = next(c for c in CONFIG.channels if c.platform == platform.name)
    channel = msgspec.structs.replace(channel, id=platform.channel, notices="thread")
    config = msgspec.structs.replace(CONFIG, channels=(channel,))
    sender = AdapterNotices({platform.name: platform.adapter})
    notifier = MergeNotifier(Digests(config, None), local_claims(), sender,
                             threads=FixedParent(parent))  # type: ignore[arg-type]
    return notifier, channel


async def test_a_notice_whose_digest_was_deleted_is_posted_in_the_channel_once(
        platform: Platform) -> None:
    parent = await _digest_posted(platform)
    platform.delete(parent)
    notifier, channel = _notifier(platform, parent)
    before = platform.top_level()
    await notifier.post(channel, notice(1212, "fix: HCCL timeout"), key="notice-1212")
    after = platform.top_level()
    assert len(after) == len(before) + 1
    assert "HCCL timeout" in after[-1]
    assert platform.replies_under(parent) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_batch_is_one_message_in_the_thread_with_every_title_escaped(
        platform: Platform, lang: str) -> None:
    from bot.delivery.batches import batch_reply
    from bot.store.notice_batches import BatchItem, DueBatch

    parent = await _digest_posted(platform)
    notifier, channel = _notifier(platform, parent)
    channel = msgspec.structs.replace(channel, lang=lang)
    items = tuple(BatchItem(repo="acme/lumen", number=n, merged_at=None,
                            reply=notice(n, f"{HOSTILE} {n}", lang)) for n in (7, 8, 9))
    batch = DueBatch(id="b1", opened_at=datetime(2026, 7, 22, tzinfo=UTC), items=items)
    await notifier.post(channel, batch_reply(channel, batch), key="b1")
    [shown] = platform.replies_under(parent)
    assert all(f"/pull/{n}" in shown for n in (7, 8, 9))
    heading = {"en": "3 PRs merged on the topics this chat follows",
               "zh": "本群关注的主题上合并了 3 个 PR"}[lang]
    assert heading in shown
    assert _inert(platform.name)(shown)


def _inert(name: str) -> Callable[[str], bool]:
    """Whether none of the hostile title's markup is live on the platform."""
    def check(shown: str) -> bool:
        if name == "feishu":
            return "<at" not in shown and "*now*" not in shown and "[click]" not in shown
        if name == "telegram":
            return "<b>x</b>" not in shown and "<at " not in shown
        return "<b>" not in shown and "<http://evil" not in shown
    return check
