"""What the scheduler did: one slot's outcome in one pass, and the counters of a replica."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import msgspec

PostStatus = Literal["posted", "already-posted", "held", "busy", "waiting", "failed"]


class PostResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one replica did about one slot in one pass.

    posted: sent and confirmed now; already-posted / held: the ledger says it is done
    (or held for an operator); busy: another replica holds the slot; waiting: an
    earlier failure's back-off has not passed; failed: not sent, retried later.
    `in_doubt`: this post re-sent a delivery whose earlier outcome was unknown.
    """

    channel: str
    repo: str
    week: str
    status: PostStatus
    replica: str
    message_ids: tuple[str, ...] = ()
    detail: str = ""
    in_doubt: bool = False


@dataclass
class ScheduleStats:
    """Counters for /metrics and the bench."""

    ticks: int = 0
    posted: int = 0
    failed: int = 0
    held: int = 0
    resent_in_doubt: int = 0
    duplicates_seen: int = 0
    source_reads: int = 0
    digest_builds: int = 0
    last_tick_at: datetime | None = None
    last_tick_seconds: float = 0.0
    # Passes that raised or had to leave a channel out, and the latest reason.
    failed_passes: int = 0
    last_pass_ok: bool = True
    last_error: str | None = None
    last_error_at: datetime | None = None

    def pass_done(self, error: str | None, at: datetime) -> None:
        """One pass ended: cleanly (None), or with the reason it failed or left a
        channel out (for /healthz)."""
        self.last_pass_ok = error is None
        if error is not None:
            self.failed_passes += 1
            self.last_error = error[:300]
            self.last_error_at = at
