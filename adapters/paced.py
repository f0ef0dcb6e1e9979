"""What an adapter's sends go through the shared loop with, held once: the lanes a
message to a chat waits its turn in (its `[platforms.<name>]` settings' `post_lanes`),
the `Pacer` those lanes live on, the platform's `Limits` and the clock its waits pass
on. A call that posts to no chat takes no turn (a 429 on it is waited out on the clock).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from adapters.sending import Limits, Outcome, send_in_turn
from bot.clock import SYSTEM_CLOCK, Clock
from bot.pacing import Lane, NoTurn, Pacer

__all__ = ["Paced"]

T = TypeVar("T")


@dataclass(frozen=True)
class Paced:
    """An adapter's sends: each in its turn of `lanes(chat)` on `pacer`, within `limits`."""

    pacer: Pacer
    lanes: Callable[[str], Sequence[Lane]]
    limits: Limits
    clock: Clock = SYSTEM_CLOCK

    async def send(self, call: Callable[[], Awaitable[T]],
                   outcome: Callable[[Exception], Outcome], *, chat: str | None,
                   late: Callable[[NoTurn], BaseException]) -> T:
        """`call()` through `adapters.sending.send_in_turn` in its turn of the lanes of
        `chat` (none without a chat), its failures read by `outcome`."""
        return await send_in_turn(call, outcome, pacer=self.pacer,
                                  lanes=self.lanes(chat) if chat is not None else (),
                                  limits=self.limits, late=late, clock=self.clock)
