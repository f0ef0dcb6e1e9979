"""A delivery that asks no question - a pasted link to preview, say - handled once
across the platform's retries and the replicas, by the claims questions use
(`bot.chat.inbound.FirstSeen`): admitted by its delivery key and handled in the
background, recorded done once sent, or let go so a retry may try again. A store that
cannot be asked lets it through: a preview shown twice beats none."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from adapters.background import Background
from bot.chat.inbound import FirstSeen, first_seen, record_outcome
from bot.models import Admission


class Once:
    """Deliveries of `platform` admitted once through `deduper`."""

    def __init__(self, deduper: FirstSeen, platform: str) -> None:
        self.deduper = deduper
        self.platform = platform

    async def admit(self, key: str | None) -> Admission:
        """Whether to handle the delivery `key`: "answer" (this process holds it now;
        always, without a key), "repeat", or "later"."""
        return await first_seen(self.deduper, self.platform, key)

    async def take(self, key: str | None, tasks: Background,
                   work: Callable[[], Coroutine[Any, Any, None]]) -> Admission:
        """Admit the delivery `key` and, when this process is to handle it, begin
        `work()` in `tasks`; the admission, for the platform's acknowledgment (as
        `adapters.answering.take` does for a question)."""
        admission = await self.admit(key)
        if admission == "answer":
            tasks.spawn(work())
        return admission

    async def record(self, key: str | None, *, done: bool) -> None:
        """The delivery `key` handled (`done`), or let go for a retry; never raises."""
        await record_outcome(self.deduper, self.platform, key, done=done)
