"""The `digest` command asked in chat comes in the channel's own chat form: a channel's
`style` (compact) and `people` settings hold for the digest its members ask for, through
the whole path a question takes (Telegram update -> adapter -> inbound pipeline ->
command handler -> digests -> renderer -> Bot API), not only for the scheduled post."""

from __future__ import annotations

import msgspec
import pytest

from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import ChannelConfig
from bot.digests import Digests
from bot.render.chat import COMPACT_CEILING
from bot.source import SnapshotSource
from bot.store.coordination import Coordination
from testkit import telegram_bot
from testkit.fakes.chat import InMemorySubscriptionStore
from testkit.fakes.telegram import FakeTelegram, group_chat, message_update, parse_html
from testkit.telegram_bot import (
    CONFIG,
    GROUP,
    NOW,
    SNAPSHOT,
    SpyHandler,
    post_update,
    running,
    wait_sent,
)

PEOPLE_EN = "people authored this week's PRs"


def _handler(**form: object) -> SpyHandler:
    """The real handler for a config whose group chat has the chat form `form`."""
    channels = tuple(msgspec.structs.replace(c, **form)  # type: ignore[arg-type]
                     if c.key == f"telegram:{GROUP}" else c for c in CONFIG.channels)
    config = msgspec.structs.replace(CONFIG, channels=channels)
    spy = SpyHandler()
    spy.inner = CommandHandler(Digests(config, SnapshotSource(SNAPSHOT),
                                       subscriptions=InMemorySubscriptionStore(),
                                       clock=HeldClock(NOW)))
    return spy


async def _asked_digest(tg: FakeTelegram, port: Coordination, monkeypatch: pytest.MonkeyPatch,
                        **form: object) -> str:
    spy = _handler(**form)
    group: ChannelConfig = next(c for c in spy.inner.config.channels
                                if c.key == f"telegram:{GROUP}")
    # The adapter looks the chat up in its own config: the same one the handler reads.
    monkeypatch.setattr(telegram_bot, "CONFIG", spy.inner.config)
    async with running(tg, port, handler=spy) as (_, http):
        await post_update(http, message_update(30, "/digest@prdigest_bot 2026-W29",
                                               chat=group_chat(GROUP)))
        sent = await wait_sent(tg)
    assert spy.asked and spy.asked[0][1] == group
    return "\n".join(parse_html(message["text"])[0] for message in sent)


async def test_a_compact_channel_asking_for_the_digest_gets_the_compact_form_with_people(
        tg: FakeTelegram, port: Coordination, monkeypatch: pytest.MonkeyPatch) -> None:
    text = await _asked_digest(tg, port, monkeypatch, style="compact", people=True)
    assert "Top themes" in text and "Executive summary" not in text
    assert len(text.replace("\n", "")) <= COMPACT_CEILING
    assert PEOPLE_EN in text


async def test_a_full_channel_without_people_gets_neither(
        tg: FakeTelegram, port: Coordination, monkeypatch: pytest.MonkeyPatch) -> None:
    text = await _asked_digest(tg, port, monkeypatch, style="full", people=False)
    assert "Executive summary" in text and "Top themes" not in text
    assert PEOPLE_EN not in text


async def test_a_full_channel_with_people_gets_the_people_paragraph(
        tg: FakeTelegram, port: Coordination, monkeypatch: pytest.MonkeyPatch) -> None:
    text = await _asked_digest(tg, port, monkeypatch, style="full", people=True)
    assert "Executive summary" in text and PEOPLE_EN in text
