"""Which message a channel's notices go under when it has `notices = "thread"`.

A notice sent during week W goes under the digest posted in week W - the digest of
week W-1, posted by the schedule (or `prdigest post`) and recorded in the delivery
ledger with its message ids. Its first message is the thread's parent. Before that
digest is posted (early on Monday, a failed post) there is no parent and the notice is
posted in the channel itself.
"""

from __future__ import annotations

import logging
from datetime import datetime

from bot.config import ChannelConfig
from bot.store.coordination import StoreUnavailable
from bot.store.ledger import Ledger, Slot
from bot.week import shift_week, week_of

log = logging.getLogger(__name__)


def digest_week(channel: ChannelConfig, at: datetime) -> str:
    """The week whose digest is posted during the week of `at`: the one before it, in
    the channel's time zone (where its schedule runs)."""
    return shift_week(week_of(at, channel.timezone), -1)


class ThreadParents:
    """Finds the digest message a notice replies under, in the delivery ledger."""

    def __init__(self, ledger: Ledger | None) -> None:
        self.ledger = ledger

    async def parent(self, channel: ChannelConfig, at: datetime) -> str | None:
        """The message id of the digest posted to `channel` in the week of `at`; None
        when the channel posts notices at the top level, or no digest is posted yet."""
        if channel.notices != "thread" or self.ledger is None:
            return None
        slot = Slot(digest_week(channel, at), channel.key, channel.scope)
        try:
            entry = await self.ledger.get(slot)
        except StoreUnavailable as exc:
            log.warning("digest of %s unreadable; notice posted in the channel: %s",
                        slot.name, exc.reason)
            return None
        if entry is None or entry.state != "posted" or not entry.message_ids:
            return None
        return entry.message_ids[0]
