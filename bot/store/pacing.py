"""The lanes of `bot.pacing` in the coordination port, so every replica books its turns
in the same ones.

Each lane is one key holding the moment (the store's time, microseconds) of its next
free turn, expiring once that has passed: an idle lane costs nothing. A booking is one
step over the lanes of one send, which share the widest lane's name (one slot on a
Redis Cluster); it books the next turn of the widest lane and takes it in the narrower
ones only when they are free by then. A 429's Retry-After moves the lanes' next turn
out in one more step. While the store is away the replica paces on its own
(`LocalPacer`) rather than posting unpaced or not at all.

A send waiting for a turn beyond the horizon (`bot.pacing.waiting_in_line`) holds a
place in its widest lane's line, in the same slot as the lanes (`Keys.pace_line`): the
booking step counts the places before it (every place, for a send not in line) and
books only a turn that stays within the horizon once they have gone, so the sends in
line go in the order they came, whichever replica they wait on. A place lapses
`LINE_KEEP_SECONDS` after its send last asked: a replica that dies while waiting loses
its place and holds up the line no longer than that.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.clock import SYSTEM_CLOCK, Clock
from bot.pacing import LINE_KEEP_SECONDS, Booking, BookingPacer, Lane, LocalPacer
from bot.store.coordination import Coordination, LinePlace, StoreUnavailable

log = logging.getLogger(__name__)

MICROSECONDS = 1_000_000
# At most one warning per this many seconds while the store is away.
_WARN_EVERY_SECONDS = 60.0


class SharedPacer(BookingPacer):
    """Turns shared by every replica on `port`'s lanes; waits on `clock`."""

    def __init__(self, port: Coordination, *, fallback: LocalPacer | None = None,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.lanes = port.lanes
        self.keys = port.keys
        self.clock = clock
        self.fallback = fallback or LocalPacer(clock)
        self._warned_at: float | None = None

    def _names(self, lanes: Sequence[Lane]) -> list[str]:
        return [self.keys.pace(lanes[0].name, lane.name) for lane in lanes]

    def _place(self, lanes: Sequence[Lane], ticket: str | None) -> LinePlace:
        order, alive = self.keys.pace_line(lanes[0].name)
        return LinePlace(order, alive, ticket, round(LINE_KEEP_SECONDS * 1000))

    async def book(self, lanes: Sequence[Lane], *, within: float,
                   ticket: str | None = None) -> Booking:
        intervals = [round(lane.rate.interval * MICROSECONDS) for lane in lanes]
        try:
            booked = await self.lanes.book(self._names(lanes), intervals,
                                           round(within * MICROSECONDS),
                                           place=self._place(lanes, ticket))
        except StoreUnavailable as exc:
            self._warn(exc)
            return await self.fallback.book(lanes, within=within, ticket=ticket)
        return Booking(booked.granted, booked.wait_us / MICROSECONDS, booked.ahead)

    async def leave_line(self, lanes: Sequence[Lane], ticket: str) -> None:
        await self.fallback.leave_line(lanes, ticket)  # it may have waited there in an outage
        try:
            await self.lanes.leave(self._place(lanes, ticket))
        except StoreUnavailable as exc:
            self._warn(exc)

    async def hold_off(self, lanes: Sequence[Lane], seconds: float) -> None:
        if not lanes or seconds <= 0:
            return
        await self.fallback.hold_off(lanes, seconds)  # kept for an outage too
        try:
            await self.lanes.hold(self._names(lanes), round(seconds * MICROSECONDS))
        except StoreUnavailable as exc:
            self._warn(exc)

    def _warn(self, exc: StoreUnavailable) -> None:
        now = self.clock.monotonic()
        if self._warned_at is None or now - self._warned_at >= _WARN_EVERY_SECONDS:
            self._warned_at = now
            log.warning("pacing: Redis is away (%s); this replica paces its posts on its "
                        "own until it is back", exc.reason)
