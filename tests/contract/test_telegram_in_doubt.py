"""A Telegram post whose answer never came: Telegram takes no idempotency key and a bot
cannot read a chat's history, so a send that timed out after Telegram took it cannot be
told from one that was lost. Against a fake Bot API that posts the message and then
holds its answer back: the post is held for an operator (`in_doubt = "hold"`, the
default) instead of being sent again, or sent again (`in_doubt = "resend"`) and then
arrives twice. The send timeout is long (30 s) so that a slow answer is waited for
rather than left in doubt, and a send that never reached Telegram (no connection) is
a plain failure, retried. The fake's answers stall in real time, so the tests that
wait for one are `slow`."""

from __future__ import annotations

from datetime import timedelta

import pytest

from adapters.base import DeliveryError, PostInDoubt
from adapters.poster import AdapterPoster
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.settings import TelegramSecrets, TelegramSettings
from bot.clock import HeldClock
from bot.config import parse_config
from bot.store.coordination import Coordination
from bot.store.memory import MemoryCoordination
from testkit.coordination import local_claims
from testkit.fakes.telegram import FakeTelegram
from testkit.redis_server import free_port
from testkit.schedule import (
    SHANGHAI_MONDAY_9,
    CountingSource,
    channel,
    make_config,
    scheduler,
)
from testkit.server_support import example_snapshot
from testkit.telegram_bot import GROUP, example_digest, running

STALL = 2.5
SEND_TIMEOUT = 1.0
"""Scaled down from the production 30 s so the test takes seconds: the fake holds its
answer longer than the adapter waits."""


async def _post_twice(tg: FakeTelegram, in_doubt: str) -> tuple[list[str], list[str], int]:
    """The schedule's first pass (its answer stalls past the timeout) and a pass an hour
    later: (the statuses of each pass, the messages Telegram shows in the chat). The
    date is held, the waits real (the stall is): the store expires on the same clock."""
    config = make_config([channel("telegram", str(GROUP), lang="en")])
    tg.stall_after_accepting("sendMessage", STALL)
    clock = HeldClock(SHANGHAI_MONDAY_9 + timedelta(minutes=1))
    port = MemoryCoordination(clock, shared=True)
    async with running(tg, port, start=False, send_timeout_seconds=SEND_TIMEOUT,
                       in_doubt=in_doubt) as (adapter, _):
        schedule = scheduler(config, CountingSource(example_snapshot()), port,
                             AdapterPoster({"telegram": adapter}), clock)
        first = await schedule.tick()
        clock.advance(timedelta(hours=1))
        second = await schedule.tick()
        held = schedule.stats.held
    sent = [m for m in tg.sent() if m["chat_id"] == str(GROUP)]
    return [r.status for r in first + second], [m["text"] for m in sent], held


@pytest.mark.slow
async def test_a_post_whose_answer_stalls_is_held_not_sent_twice(tg: FakeTelegram) -> None:
    passes, sent, held = await _post_twice(tg, "hold")
    assert passes == ["held", "held"]  # the second pass finds it held and sends nothing
    assert held == 1
    assert len(sent) == 1  # Telegram did take it: once, never twice


@pytest.mark.slow
async def test_resend_sends_a_stalled_post_again_and_it_arrives_twice(tg: FakeTelegram
                                                                      ) -> None:
    """The other policy, for teams that would rather have it twice than not at all."""
    passes, sent, _ = await _post_twice(tg, "resend")
    assert passes == ["failed", "posted"]
    assert len(sent) == 2 and sent[0] == sent[1]


@pytest.mark.slow
async def test_the_in_doubt_error_says_what_may_have_been_posted(
        tg: FakeTelegram, port: Coordination) -> None:
    tg.stall_after_accepting("sendMessage", STALL)
    async with running(tg, port, start=False, send_timeout_seconds=SEND_TIMEOUT) as (adapter, _):
        with pytest.raises(PostInDoubt) as raised:
            await adapter.post_digest(str(GROUP), example_digest("en"))
    assert raised.value.resend is False
    assert "0 of 1 messages posted to -1001234567890 for certain, and message 1 may have " \
        "been posted too: Timed out waiting for Telegram's answer to sendMessage" \
        in str(raised.value)
    assert tg.token not in str(raised.value)


@pytest.mark.slow
async def test_a_slow_answer_within_the_send_timeout_is_waited_for(
        tg: FakeTelegram, port: Coordination) -> None:
    """Telegram's answer after 1.5 s (PTB's own default read timeout is 5 s; prdigest
    waits 30 s for a message's answer): posted once, nothing in doubt."""
    tg.stall_after_accepting("sendMessage", 1.5)
    async with running(tg, port, start=False, send_timeout_seconds=4.0) as (adapter, _):
        ids = await adapter.post_digest(str(GROUP), example_digest("en"))
    assert len(ids) == 1 and len(tg.sent()) == 1


async def test_a_send_that_never_reached_telegram_is_a_plain_failure() -> None:
    """Nothing listens where the Bot API should be: no connection, so nothing can have
    been posted - a failure to retry, not a post in doubt."""
    dead = f"http://127.0.0.1:{free_port()}/bot"
    adapter = TelegramAdapter(make_config([]), None, local_claims(),  # type: ignore[arg-type]
                              TelegramSecrets("1:x", "s"),
                              TelegramSettings(api_url=dead,
                                               send_timeout_seconds=SEND_TIMEOUT))
    try:
        with pytest.raises(DeliveryError) as raised:
            await adapter.post_digest(str(GROUP), example_digest("en"))
    finally:
        await adapter.close()
    assert not isinstance(raised.value, PostInDoubt)


def test_the_settings_wait_30_s_hold_by_default_and_check_their_bounds() -> None:
    settings = TelegramSettings()
    assert settings.send_timeout_seconds == 30 and settings.in_doubt == "hold"
    with pytest.raises(Exception, match=r"platforms.telegram.send_timeout_seconds: must be"):
        parse_config({"platforms": {"telegram": {"send_timeout_seconds": 2}}},
                     platforms={"telegram": TelegramSettings})
    with pytest.raises(Exception, match=r"in_doubt"):
        parse_config({"platforms": {"telegram": {"in_doubt": "maybe"}}},
                     platforms={"telegram": TelegramSettings})
