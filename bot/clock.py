"""Time, from one place: what time it is, and waiting for time to pass.

Every part of the service that asks the time or waits - the schedule's due runs and
back-offs, a lock's renewals, claims' alive marks, the pacing lanes, the background
loops, the cache's freshness - takes a `Clock`. Production runs on `SYSTEM_CLOCK`;
tests give the same code a virtual clock (`testkit.clock.VirtualClock`) whose sleeps
pass at once, so a test of a 60 s lock or a 1-message-a-second lane takes no wall time.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """What the time is and how to let time pass."""

    def now(self) -> datetime:
        """The current moment, timezone-aware UTC (what is due, what is fresh)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (deadlines, expiries, intervals)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Let `seconds` pass."""
        ...

    async def wait(self, event: asyncio.Event, timeout: float) -> bool:
        """Wait until `event` is set or `timeout` seconds have passed; whether it is set."""
        ...

    def pause(self, seconds: float) -> None:
        """Let `seconds` pass, blocking the calling thread (worker threads: GitHub's
        retries and rate-limit waits)."""
        ...


class SystemClock:
    """The machine's clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    async def wait(self, event: asyncio.Event, timeout: float) -> bool:
        if not event.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=max(0.0, timeout))
        return event.is_set()

    def pause(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


SYSTEM_CLOCK: Clock = SystemClock()
"""The clock of every process; components default to it."""


class HeldClock(SystemClock):
    """The machine's clock with the date held at `moment`, moved only by `set` and
    `advance`: a run over a snapshot file asks about the file's weeks (`last week` is
    the data's, not today's), while its waits still pass in real time."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment

    def set(self, moment: datetime) -> None:
        self.moment = moment

    def advance(self, by: timedelta) -> None:
        self.moment += by
