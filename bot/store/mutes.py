"""Merged-PR notices muted per channel (`mute 1d`, `静音 3 天`, `unmute`), kept in the
coordination port's claim store: Redis, so every replica's notices see a mute at once
and it survives a restart; memory for a single process and the tests.

A mute is one small record per channel: until when (None: until someone unmutes),
who muted and when. Whether it is in force is judged on the injected `Clock` (a
virtual one in tests); the store's own expiry - the mute's length plus an hour - only
clears the record once it is over, so an ended mute leaves nothing behind. A record
that cannot be read (written by a later version) counts as no mute: notices go out.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta

import msgspec

from bot.clock import SYSTEM_CLOCK, Clock
from bot.models import Time
from bot.store.coordination import Coordination

LEAST_MUTE = timedelta(hours=1)
MOST_MUTE = timedelta(days=90)
"""The shortest and the longest mute with an end; `mute` alone lasts until `unmute`."""
LINGER = timedelta(hours=1)
"""How long an ended mute's record stays in the store before it expires there."""

_DURATION = re.compile(r"(?P<count>[0-9]{1,9})(?P<unit>[hdw])")
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


class Mute(msgspec.Struct, frozen=True, kw_only=True):
    """A channel's notices muted: `until` (None: until unmuted), `by` (`platform:user`)
    and `at` (when it was set)."""

    until: Time | None = None
    by: str = ""
    at: Time | None = None

    def active(self, now: datetime) -> bool:
        return self.until is None or now < self.until


def mute_length(value: str) -> timedelta | None:
    """How long a mute's value (`Command.value`: "2h", "3d", "1w") lasts; None for ""
    (until unmuted). Raises ValueError for anything else, or a length outside
    `LEAST_MUTE`..`MOST_MUTE`."""
    if value == "":
        return None
    found = _DURATION.fullmatch(value)
    if found is None:
        raise ValueError(f"not a mute's length: {value!r}")
    count = int(found["count"])
    unit = _UNITS[found["unit"]]
    # Compared in hours before a timedelta is made: a huge count must not overflow.
    if not LEAST_MUTE <= unit * min(count, MOST_MUTE // unit + 1) <= MOST_MUTE:
        raise ValueError(f"a mute lasts from {LEAST_MUTE} to {MOST_MUTE}: {value!r}")
    return unit * count


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Mute).decode


class Mutes:
    """The channels' mutes, by channel key (`slack:C0123`), over `port`'s claims.

    Every call may raise `StoreUnavailable`: chat answers a failed change with a
    friendly error, and notices treat an unreadable mute as a failed post (tried again
    by the next delivery or poll)."""

    def __init__(self, port: Coordination, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.port = port
        self.clock = clock

    def _key(self, channel_key: str) -> str:
        return self.port.keys.notice_mute(channel_key)

    async def get(self, channel_key: str) -> Mute | None:
        """The channel's mute while it is in force, else None."""
        raw = await self.port.claims.get(self._key(channel_key))
        if raw is None:
            return None
        try:
            mute = _decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        return mute if mute.active(self.clock.now()) else None

    async def mute(self, channel_key: str, length: timedelta | None, *, by: str = "") -> Mute:
        """Mute the channel for `length` from now (None: until unmuted), replacing any
        mute it had."""
        now = self.clock.now()
        mute = Mute(until=None if length is None else now + length, by=by, at=now)
        ttl_ms = None if length is None else math.ceil((length + LINGER).total_seconds() * 1000)
        await self.port.claims.put(self._key(channel_key), _encode(mute), ttl_ms=ttl_ms)
        return mute

    async def unmute(self, channel_key: str) -> Mute | None:
        """End the channel's mute; the mute that was in force, None when there was none."""
        was = await self.get(channel_key)
        await self.port.claims.delete(self._key(channel_key))
        return was
