"""Batched notices sent when due: one message per batch, by one replica.

Every replica runs `BatchFlusher.run_forever`; each pass asks Redis, for each channel
with `notice_batch_minutes`, for its batch to send (`NoticeBatches.take`: the one
already out, else the open one once due). The batch is sent under a claim in two steps
(`Claims.begin` ... `finish`) named by the batch's id, so while one replica sends it
the others skip it, and a batch whose sender was killed is taken over once that
replica's alive mark lapses. The order after the post - drop the batch, then finish
the claim - leaves nothing to send twice when a replica dies between the two. A
replica dying between the platform's answer and the drop leaves the batch to the one
that takes the claim over, which first asks the platform whether it arrived (Slack
finds it by the claim key in its message metadata: recorded, not sent again) and sends
it again only when it did not or the platform cannot tell (Feishu drops that copy by
its `uuid`; Telegram, which has neither a key nor a readable history, shows it twice -
the same window as a digest in doubt, see `bot.delivery.schedule`). A send that timed
out after the platform may have taken it follows the platform's `in_doubt`
(`bot.delivery.notices`): `hold` drops the batch as sent, `resend` sends it again. A
batch falling due while its channel's notices are muted is dropped unsent, as the muted
merges are.
"""

from __future__ import annotations

import asyncio
import logging

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ChannelConfig, Config, ConfigView
from bot.delivery.notices import NOTICE_TTL_SECONDS, MergeNotifier, NoticeResult, held_in_doubt
from bot.delivery.periodic import run_every
from bot.events import NoticePosted
from bot.models import Reply
from bot.store.claims import Claims
from bot.store.coordination import StoreUnavailable
from bot.store.keys import Keys
from bot.store.notice_batches import DueBatch, NoticeBatches

log = logging.getLogger(__name__)

FLUSH_INTERVAL_SECONDS = 15.0
"""How often a replica looks for due batches: a batch goes out at most this late."""


def batch_reply(channel: ChannelConfig, batch: DueBatch) -> Reply:
    """What a batch says: a lone merge is its own notice; several are one list, in the
    order they merged, with every topic of this channel they touched."""
    if len(batch.items) == 1:
        return batch.items[0].reply
    topics: list[str] = []
    for item in batch.items:
        topics += [t for t in item.reply.topics if t not in topics]
    return Reply(kind="notices", lang=channel.lang, topics=tuple(topics),
                 notices=tuple(item.reply for item in batch.items))


class BatchFlusher:
    """Sends each channel's due notice batch once, whichever replica finds it due."""

    def __init__(self, config: ConfigView, notifier: MergeNotifier, batches: NoticeBatches,
                 claims: Claims, *, interval_seconds: float = FLUSH_INTERVAL_SECONDS,
                 clock: Clock = SYSTEM_CLOCK,
                 claim_ttl_seconds: int = NOTICE_TTL_SECONDS) -> None:
        self.settings = config
        self.notifier = notifier
        self.batches = batches
        self.claims = claims
        self.interval_seconds = interval_seconds
        self.clock = clock
        self.claim_ttl_seconds = claim_ttl_seconds

    @property
    def config(self) -> Config:
        """The config in force (a reload changes which channels batch)."""
        return self.settings.current

    def channels(self) -> list[ChannelConfig]:
        """The channels that batch their notices."""
        return [c for c in self.config.channels if c.notice_batch_minutes > 0]

    async def flush_due(self) -> NoticeResult:
        """One pass: send every due batch this replica gets the claim of."""
        result = NoticeResult()
        for channel in self.channels():
            try:
                batch = await self.batches.take(channel.key, self.clock.now())
            except StoreUnavailable as exc:
                log.warning("notice batch of %s unreadable: %s", channel.key, exc.reason)
                continue
            if batch is None:
                continue
            # Shielded: a replica stopping gracefully lets a batch in flight be recorded.
            work = asyncio.ensure_future(self._flush(channel, batch))
            try:
                outcome = await asyncio.shield(work)
            except asyncio.CancelledError:
                await asyncio.wait([work], timeout=30.0)
                raise
            if outcome == "sent":
                result.notified.append(channel.key)
            elif outcome == "failed":
                result.failed.append(channel.key)
            elif outcome == "muted":
                result.muted.append(channel.key)
            elif outcome == "held":
                result.held.append(channel.key)
        return result

    async def _flush(self, channel: ChannelConfig, batch: DueBatch) -> str:
        claim = Keys.batch_flush(channel.key, batch.id)
        if not self.notifier.sender.can_send(channel):
            return "busy"
        begun = await self.claims.begin_work(claim, self.claim_ttl_seconds)
        if begun is None:
            return "busy"
        try:
            muted = await self.notifier.muted(channel)
        except StoreUnavailable as exc:
            log.warning("mute of %s unreadable; notice batch %s waits: %s", channel.key,
                        batch.id, exc.reason)
            await self.claims.release(claim)
            return "failed"
        if batch.items and not muted:
            try:
                await self.notifier.post(channel, batch_reply(channel, batch), key=claim,
                                         in_doubt_since=begun.in_doubt_since)
            except Exception as exc:  # the next pass sends it again, unless held
                if not held_in_doubt(exc):
                    log.warning("notice batch %s to %s failed: %s", batch.id, channel.key,
                                exc)
                    await self.claims.release(claim)
                    self._sent(channel, False)
                    return "failed"
                # It may be in the chat: done, never sent twice (the platform's in_doubt).
                log.warning("notice batch %s to %s may or may not have arrived (%s); not "
                            "sent again, as the platform's in_doubt says", batch.id,
                            channel.key, exc)
                await self._done(channel, batch, claim)
                self._sent(channel, False)
                return "held"
        await self._done(channel, batch, claim)
        if muted:
            log.info("notice batch %s to %s dropped: notices muted (%d PR(s))", batch.id,
                     channel.key, len(batch.items))
            return "muted"
        self._sent(channel, True)
        log.info("notice batch %s to %s: %d PR(s)", batch.id, channel.key, len(batch.items))
        return "sent"

    async def _done(self, channel: ChannelConfig, batch: DueBatch, claim: str) -> None:
        """The batch is out (or held): dropped, then its claims finished."""
        await self.batches.drop(channel.key, batch.id)
        await self.claims.finish(claim, self.claim_ttl_seconds)
        for item in batch.items:  # announced: a later unbatched config knows it too
            await self.claims.finish(Keys.notice(item.repo, item.number, channel.key),
                                     self.claim_ttl_seconds)

    def _sent(self, channel: ChannelConfig, ok: bool) -> None:
        self.notifier.events.emit(NoticePosted(channel.platform, ok))

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Flush until `stop` is set; errors are logged and the next pass goes on."""
        await run_every(self.clock, self.interval_seconds, stop, self.flush_due, log,
                        "notice batches: pass failed")
