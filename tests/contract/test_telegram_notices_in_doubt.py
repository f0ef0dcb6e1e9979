"""A merged-PR notice whose Telegram answer never came follows the same `in_doubt`
policy as a weekly post: against a fake Bot API that takes the message and then holds
its answer back, `hold` (the default) records the notice as sent - a redelivery of the
merge sends nothing, the chat shows it once - and `resend` releases it, so the next
redelivery sends it again and the chat shows it twice. The fake's answers stall in
real time, so these are `slow`."""

from __future__ import annotations

import msgspec
import pytest

from adapters.poster import AdapterNotices
from bot.delivery.notices import MergeNotifier, NoticeResult
from bot.digests import Digests
from bot.source import SnapshotSource
from bot.store.memory import MemoryCoordination
from testkit.coordination import claims_on
from testkit.fakes.telegram import FakeTelegram
from testkit.server_support import NOW, REPO, example_config, example_snapshot, snapshot_pull
from testkit.telegram_bot import GROUP, running

TELEGRAM = f"telegram:{GROUP}"  # follows `trainer`, which #1202 touches
STALL = 2.5
SEND_TIMEOUT = 1.0
"""Scaled down from the production 30 s: the fake holds its answer longer than that."""


async def _announce_twice(tg: FakeTelegram, in_doubt: str
                          ) -> tuple[NoticeResult, NoticeResult, list[str]]:
    """The merge announced (its answer stalls past the timeout), then redelivered:
    (each announcement's result, the texts Telegram shows in the chat)."""
    tg.stall_after_accepting("sendMessage", STALL)
    port = MemoryCoordination(shared=True)
    pull = msgspec.structs.replace(snapshot_pull(1202), state="merged", merged_at=NOW,
                                   closed_at=NOW)
    async with running(tg, port, start=False, send_timeout_seconds=SEND_TIMEOUT,
                       in_doubt=in_doubt) as (adapter, _):
        notifier = MergeNotifier(Digests(example_config(), SnapshotSource(example_snapshot())),
                                 claims_on(port), AdapterNotices({"telegram": adapter}))
        first = await notifier.announce(REPO, pull)
        again = await notifier.announce(REPO, pull)
    sent = [m["text"] for m in tg.sent() if m["chat_id"] == str(GROUP)]
    return first, again, sent


@pytest.mark.slow
async def test_a_notice_whose_answer_stalls_is_held_not_sent_twice(tg: FakeTelegram) -> None:
    first, again, sent = await _announce_twice(tg, "hold")
    assert (first.held, first.failed, first.notified) == ([TELEGRAM], [], [])
    assert (again.held, again.failed, again.notified) == ([], [], [])  # already done
    assert len(sent) == 1  # Telegram did take it: once, never twice


@pytest.mark.slow
async def test_resend_sends_a_stalled_notice_again_and_it_arrives_twice(tg: FakeTelegram
                                                                        ) -> None:
    first, again, sent = await _announce_twice(tg, "resend")
    assert (first.held, first.failed) == ([], [TELEGRAM])
    assert again.notified == [TELEGRAM]
    assert len(sent) == 2 and sent[0] == sent[1]
