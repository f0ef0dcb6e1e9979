"""The lanes of `bot.pacing` in the coordination port, so every replica books its turns
in the same ones.

Each lane is one key holding the moment (the store's time, microseconds) of its next
free turn, expiring once that has passed: an idle lane costs nothing. A booking is one
step over the lanes of one send, which share the widest lane's name (one slot on a
Redis Cluster); it books the next turn of the widest lane and takes it in the narrower
ones only when they are free by then. A 429's Retry-After moves the lanes' next turn
out in one more step. While the store is away the replica paces on its own
(`LocalPacer`) rather than posting unpaced or not at all.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.clock import SYSTEM_CLOCK, Clock
from bot.pacing import Booking, BookingPacer, Lane, LocalPacer
from bot.store.coordination import Coordination, StoreUnavailable

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

    async def book(self, lanes: Sequence[Lane], *, within: float) -> Booking:
        intervals = [round(lane.rate.interval * MICROSECONDS) for lane in lanes]
        try:
            booked = await self.lanes.book(self._names(lanes), intervals,
                                           round(within * MICROSECONDS))
        except StoreUnavailable as exc:
            self._warn(exc)
            return await self.fallback.book(lanes, within=within)
        return Booking(booked.granted, booked.wait_us / MICROSECONDS)

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
