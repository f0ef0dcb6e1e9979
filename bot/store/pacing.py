"""The lanes of `bot.pacing` in Redis, so every replica books its turns in the same ones.

Each lane is one key holding the moment (Redis `TIME`, microseconds) of its next free
turn, expiring once that has passed: an idle lane costs nothing. A booking is one
script over the lanes of one send, which share the widest lane's hash tag (one slot on
a Cluster); it books the next turn of the widest lane and takes it in the narrower ones
only when they are free by then. A 429's Retry-After moves the lanes' next turn out in
one more script. While Redis is away the replica paces on its own (`LocalPacer`) rather
than posting unpaced or not at all.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import redis.asyncio as aioredis

from bot.clock import SYSTEM_CLOCK, Clock
from bot.pacing import Booking, BookingPacer, Lane, LocalPacer
from bot.store.client import REDIS_ERRORS
from bot.store.keys import Keys

log = logging.getLogger(__name__)

MICROSECONDS = 1_000_000
# How long after a lane's next turn its key stays (ms): a margin past the turn.
_KEY_MARGIN_MS = 1000
# At most one warning per this many seconds while Redis is away.
_WARN_EVERY_SECONDS = 60.0

# KEYS: the lanes, widest first. ARGV[1]: how far ahead a turn may be booked (us);
# ARGV[1 + i]: lane i's interval (us); last: the key margin (ms). Returns {1, wait} when
# booked (the turn is `wait` us away), {0, wait} when not: a narrower lane is busy, or
# the turn is further away than allowed.
_BOOK = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local start = math.max(now, tonumber(redis.call('GET', KEYS[1]) or 0))
for i = 2, #KEYS do
  local free = tonumber(redis.call('GET', KEYS[i]) or 0)
  if free > start then return {0, free - now} end
end
if start - now > tonumber(ARGV[1]) then return {0, start - now} end
for i = 1, #KEYS do
  local free = start + tonumber(ARGV[i + 1])
  redis.call('SET', KEYS[i], string.format('%d', free), 'PX',
             math.ceil((free - now) / 1000) + tonumber(ARGV[#KEYS + 2]))
end
return {1, start - now}
"""
# KEYS: the lanes. ARGV[1]: the hold (us), ARGV[2]: key margin (ms). No turn before it.
_HOLD = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local resume = now + tonumber(ARGV[1])
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or 0) < resume then
    redis.call('SET', KEYS[i], string.format('%d', resume), 'PX',
               math.ceil((resume - now) / 1000) + tonumber(ARGV[2]))
  end
end
return 1
"""


class RedisPacer(BookingPacer):
    """Turns shared by every replica on `client` (any topology of `bot.store.client`)."""

    def __init__(self, client: aioredis.Redis, keys: Keys | None = None, *,
                 fallback: LocalPacer | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        self.client = client
        self.keys = keys or Keys()
        self.clock = clock
        self.fallback = fallback or LocalPacer(clock)
        self._warned_at: float | None = None

    def _names(self, lanes: Sequence[Lane]) -> list[str]:
        return [self.keys.pace(lanes[0].name, lane.name) for lane in lanes]

    async def book(self, lanes: Sequence[Lane], *, within: float) -> Booking:
        intervals = [round(lane.rate.interval * MICROSECONDS) for lane in lanes]
        try:
            granted, wait = await self.client.eval(
                _BOOK, len(lanes), *self._names(lanes), round(within * MICROSECONDS),
                *intervals, _KEY_MARGIN_MS)
        except REDIS_ERRORS as exc:
            self._warn(exc)
            return await self.fallback.book(lanes, within=within)
        return Booking(bool(int(granted)), int(wait) / MICROSECONDS)

    async def hold_off(self, lanes: Sequence[Lane], seconds: float) -> None:
        if not lanes or seconds <= 0:
            return
        await self.fallback.hold_off(lanes, seconds)  # kept for a Redis outage too
        try:
            await self.client.eval(_HOLD, len(lanes), *self._names(lanes),
                                   round(seconds * MICROSECONDS), _KEY_MARGIN_MS)
        except REDIS_ERRORS as exc:
            self._warn(exc)

    def _warn(self, exc: Exception) -> None:
        now = self.clock.monotonic()
        if self._warned_at is None or now - self._warned_at >= _WARN_EVERY_SECONDS:
            self._warned_at = now
            log.warning("pacing: Redis is away (%s); this replica paces its posts on its "
                        "own until it is back", type(exc).__name__)
