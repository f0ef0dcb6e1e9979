"""How a post that did not wholly arrive is told to the core, for every platform.

A split post that stopped part-way (`adapters.sending.Stopped`) raises what the core
reads: `PostInDoubt` when the part it stopped at may have arrived - resent or held as
the platform's setting says - else `DeliveryError`, each saying how many parts were
posted for certain. A platform that cannot be asked which parts of a post arrived
(no readable history, no lookup by key) says so by `complete_delivery` and
`complete_reply` answering None (`NoArrivalLookup`): the core then decides.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from adapters.base import DeliveryError, PostInDoubt
from adapters.sending import Stopped
from bot.models import Digest, Reply

__all__ = ["NoArrivalLookup", "stopped_post"]


def stopped_post(stop: Stopped, platform: str, channel_id: str, *, method: str,
                 resend: bool, quote: Callable[[BaseException], str] = str) -> DeliveryError:
    """What a post to `channel_id` that stopped at a part raises: how many of its
    messages were posted for certain and why `method` failed, in doubt when that part
    may have been posted too; `quote` writes the error (its secrets left out)."""
    posted = f"{platform}: {len(stop.sent)} of {stop.total} messages posted to {channel_id}"
    if stop.in_doubt:
        return PostInDoubt(f"{posted} for certain, and message {len(stop.sent) + 1} may "
                           f"have been posted too: {quote(stop.error)}", resend=resend)
    return DeliveryError(f"{posted}; {method} failed: {quote(stop.error)}")


class NoArrivalLookup:
    """The half of the adapter contract for a platform that cannot be asked whether a
    post arrived: a delivery or notice left in doubt is the core's to decide."""

    async def complete_delivery(self, channel_id: str, digest: Digest, *,
                                idempotency_key: str, since: datetime) -> list[str] | None:
        """Whether the delivery arrived is unknown."""
        return None

    async def complete_reply(self, channel_id: str, reply: Reply, *, idempotency_key: str,
                             since: datetime, thread: str | None = None) -> list[str] | None:
        """Whether the notice arrived is unknown."""
        return None
