"""One announcement per merge, whoever tells of it: a webhook delivery, a redelivery,
the merge poller or its reconciliation pass.

A merge is named by (repository, PR, merge commit) and claimed in Redis BEFORE
anything is fetched for it: a merge already announced (or being announced by a live
replica) costs no GitHub request, however often the poller sees it in the closed
list or GitHub delivers it again. The claim is the memory of what was announced: it
is kept for `MERGE_TTL_SECONDS` once the notices went out, and released when one
failed, so the next delivery or poll tries again.
"""

from __future__ import annotations

from datetime import timedelta

from bot.delivery.notices import MergeNotifier, NoticeResult
from bot.github.events import MergedPull
from bot.store.claims import Begun, Claims, Held
from bot.store.keys import Keys

MERGE_TTL_SECONDS = 7 * 24 * 3600
"""How long an announced merge is remembered. GitHub lets a delivery be redelivered for
three days; the poller only announces merges younger than this (`MERGE_MEMORY`), so
nothing it is shown again is fetched again."""
MERGE_MEMORY = timedelta(seconds=MERGE_TTL_SECONDS)


class MergeAnnouncer:
    """`claim`, then `announce_claimed`: split for the webhook, which answers GitHub
    from the claim before the notices go out; `announce` does both."""

    def __init__(self, claims: Claims, notifier: MergeNotifier, *,
                 ttl_seconds: int = MERGE_TTL_SECONDS) -> None:
        self.claims = claims
        self.notifier = notifier
        self.ttl_seconds = ttl_seconds

    @staticmethod
    def key(merge: MergedPull) -> str:
        return Keys.merge(merge.repository, merge.pull.number, merge.merge)

    async def claim(self, merge: MergedPull) -> Begun | Held:
        """A `Begun` when this caller is the one to announce the merge (not announced
        yet, or its announcer died before finishing); otherwise why not - `Held.ELSEWHERE`
        when another process holds it unfinished. Redis errors are the caller's."""
        return await self.claims.try_begin(self.key(merge), self.ttl_seconds)

    async def announce_claimed(self, merge: MergedPull) -> NoticeResult:
        """Announce a merge `claim` gave this caller; remembered when every notice went
        out, released (to be tried again) when one failed, a channel's notice is held by
        another process (`waiting`: it may have died) or the announcing raised."""
        key = self.key(merge)
        try:
            result = await self.notifier.announce(merge.repository, merge.pull)
        except BaseException:
            await self.claims.release(key)
            raise
        if result.failed or result.waiting:
            await self.claims.release(key)
        else:
            await self.claims.finish(key, self.ttl_seconds)
        return result

    async def announce(self, merge: MergedPull) -> NoticeResult | None:
        """Announce the merge unless it was (or is being) announced; None when skipped,
        without any fetch."""
        if not isinstance(await self.claim(merge), Begun):
            return None
        return await self.announce_claimed(merge)
