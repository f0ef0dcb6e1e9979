"""Where the schedule's digests go: the `Poster` protocol.

Production's is `adapters.poster.AdapterPoster` over the configured platforms; the
schedule tells each post to its events (`/metrics` counts them) and tests use fakes of
it. What it promises about delivery keys and deliveries in doubt is what the
schedule's exactly-once rests on (`bot.delivery.schedule`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from bot.config import ChannelConfig
from bot.models import Digest


class Poster(Protocol):
    """Where digests go; production dispatches to the platform adapters (`AdapterPoster`)."""

    async def post_digest(
        self, channel: ChannelConfig, digest: Digest, *, delivery_key: str
    ) -> list[str]:
        """Post and return the platform's message ids; raise when it did not confirm.

        `delivery_key` is the same for every retry of one delivery; a platform that
        deduplicates by an idempotency key is given it (per message part).
        """
        ...

    def idempotency_window(self, channel: ChannelConfig) -> timedelta | None:
        """How long the platform drops a re-send with the same key; None: it never does."""
        ...

    async def complete_delivery(self, channel: ChannelConfig, digest: Digest, *,
                                delivery_key: str, since: datetime) -> list[str] | None:
        """Whether a delivery in doubt arrived: its message ids (after posting any part
        missing), or None when nothing arrived or the platform cannot tell."""
        ...
