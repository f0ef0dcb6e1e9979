"""The one send loop of every platform: wait for a turn in the message's pacing lanes,
send, and on a refusal the platform says may pass (a 429, a renewed token, a 5xx a
key makes safe to repeat) hold the lanes off and go again in the next turn.

Each adapter gives what is its own - how one request is made and what its answers
mean (`Again`), how many tries, how long a turn may be waited for, the error a turn
too far away becomes - and the loop is written once. The parts of a message split in
several go through `send_parts`, which skips the parts already delivered (found again
for a post left in doubt) and says how far a failed delivery got.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

from bot.clock import SYSTEM_CLOCK, Clock
from bot.pacing import Lane, NoTurn, Pacer

T = TypeVar("T")
M = TypeVar("M")
E = TypeVar("E", bound=BaseException)


class Again(Exception):
    """What an attempt raises when the platform refused it: `error` is raised when no
    try is left (or `retry` is False); `hold` holds the lanes off that many seconds (a
    429's Retry-After); `pause` waits before the next try without holding anyone else
    (a 5xx backing off)."""

    def __init__(self, error: BaseException, *, hold: float | None = None,
                 retry: bool = True, pause: float = 0.0) -> None:
        super().__init__(str(error))
        self.error = error
        self.hold = hold
        self.retry = retry
        self.pause = pause


async def send_in_turn(
    attempt: Callable[[int], Awaitable[T]], *, pacer: Pacer, lanes: Sequence[Lane],
    attempts: int, max_wait: float, late: Callable[[NoTurn], BaseException],
    clock: Clock = SYSTEM_CLOCK,
) -> T:
    """`attempt(n)` for n = 1, 2, ... each in its turn of `lanes`, until it returns or
    raises anything but `Again`, or `attempts` tries are spent (then the last `Again`'s
    error). A turn further away than `max_wait` seconds raises `late(NoTurn)`. Without
    lanes (a call that posts nothing) a hold is waited out here."""
    tries = max(1, attempts)
    for number in range(1, tries + 1):
        try:
            await pacer.take_turn(lanes, max_wait=max_wait)
        except NoTurn as too_late:
            raise late(too_late) from None
        try:
            return await attempt(number)
        except Again as again:
            if again.hold is not None and lanes:
                await pacer.hold_off(lanes, again.hold)
            if number >= tries or not again.retry:
                raise again.error from None
            if again.hold is not None and not lanes:
                await clock.sleep(again.hold + 0.1)
            if again.pause:
                await clock.sleep(again.pause)
    raise AssertionError("unreachable: at least one attempt is made")  # pragma: no cover


async def send_parts(
    messages: Sequence[M], send: Callable[[int, M], Awaitable[str]], *,
    found: Mapping[int, str] | None = None,
    partial: Callable[[E, list[str]], BaseException],
    failure: type[E],
) -> list[str]:
    """Each part not already `found` (part -> id) sent in order; the ids of every part.
    A part failing with `failure` raises `partial(error, sent)` (`sent`: the ids of
    the parts before it, maybe none), so the caller can say how far the delivery got
    (or raise the error itself)."""
    posted: list[str] = []
    found = found or {}
    for part, message in enumerate(messages):
        if part in found:
            posted.append(found[part])
            continue
        try:
            posted.append(await send(part, message))
        except failure as error:
            raised = partial(error, posted)
            if raised is error:
                raise
            raise raised from None
    return posted
