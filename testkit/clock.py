"""A clock tests control: `bot.clock.Clock` whose time passes only when made to.

`VirtualClock` starts at a given moment and stays there until a test moves it
(`advance`, `set`) or code sleeps on it. A sleep returns at once in wall time: the
clock moves on to the sleeper's wake-up time, sleepers waking in the order of their
wake-up times (the earliest first, after the tasks that are ready have run), so a
lock renewed every 20 s outlives its 60 s TTL, and a lane of one message a second
spaces ten messages over 9 s of the clock, in a few milliseconds of the test's.

What a virtual clock does not cover: real I/O in flight while another task sleeps on
it finishes in no virtual time at all, and a fake platform that limits its rate by its
own (real) clock sees the paced messages arrive together. Tests of those keep the
system clock.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from datetime import UTC, datetime, timedelta

START = datetime(2026, 7, 20, 1, 0, tzinfo=UTC)
"""Monday 2026-07-20 09:00 in Shanghai: the example week's posting minute."""
MONOTONIC_START = 10_000.0
"""Where `monotonic()` starts: no component's first deadline or expiry is at 0."""
_SETTLE_HOPS = 24
"""Loop iterations given to the tasks that are ready before the clock moves on."""


def _seconds(amount: float | timedelta) -> float:
    return amount.total_seconds() if isinstance(amount, timedelta) else float(amount)


class VirtualClock:
    """A `bot.clock.Clock` whose time moves only by `advance`, `set` and sleeps.
    `slept` lists every sleep asked of it, in seconds."""

    def __init__(self, start: datetime = START) -> None:
        if start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
        self._wall = start - timedelta(seconds=MONOTONIC_START)
        self._elapsed = MONOTONIC_START
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._moving = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.RLock()
        self.slept: list[float] = []

    # --- the Clock protocol -----------------------------------------------------------

    def now(self) -> datetime:
        with self._lock:
            return self._wall + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        with self._lock:
            return self._elapsed

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        loop = asyncio.get_running_loop()
        self._loop = loop
        woken: asyncio.Future[None] = loop.create_future()
        with self._lock:
            heapq.heappush(self._sleepers, (self._elapsed + seconds, next(self._order), woken))
        self._move_soon(loop)
        try:
            await woken
        finally:
            if not woken.done():
                woken.cancel()

    async def wait(self, event: asyncio.Event, timeout: float) -> bool:
        if event.is_set():
            return True
        waiter = asyncio.ensure_future(event.wait())
        timer = asyncio.ensure_future(self.sleep(timeout))
        try:
            await asyncio.wait({waiter, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            timer.cancel()
        return event.is_set()

    def pause(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(max(0.0, seconds))

    # --- what tests do ----------------------------------------------------------------

    def advance(self, by: float | timedelta) -> None:
        """Let `by` pass (seconds or a timedelta): sleepers due by then wake."""
        seconds = _seconds(by)
        if seconds < 0:
            raise ValueError("a clock's time does not go back; use set() to move the date")
        with self._lock:
            self._elapsed += seconds
        self._wake_due()

    def set(self, moment: datetime) -> None:
        """Make it `moment`: later moves time on (as `advance`), earlier moves only the
        date back (as a wall clock set back; `monotonic` never goes back)."""
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        ahead = (moment - self.now()).total_seconds()
        if ahead >= 0:
            self.advance(ahead)
        else:
            with self._lock:
                self._wall += timedelta(seconds=ahead)

    # --- moving on --------------------------------------------------------------------

    def _move_soon(self, loop: asyncio.AbstractEventLoop) -> None:
        """Move to the earliest wake-up once the tasks that are ready have run."""
        if not self._moving:
            self._moving = True
            loop.call_soon(self._hop, loop, _SETTLE_HOPS)

    def _hop(self, loop: asyncio.AbstractEventLoop, left: int) -> None:
        if left > 0:
            loop.call_soon(self._hop, loop, left - 1)
            return
        self._moving = False
        with self._lock:
            while self._sleepers and self._sleepers[0][2].done():
                heapq.heappop(self._sleepers)
            if not self._sleepers:
                return
            self._elapsed = max(self._elapsed, self._sleepers[0][0])
        self._wake_due()

    def _wake_due(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:  # another thread: wake them on their own loop
                loop.call_soon_threadsafe(self._wake_due_here, loop)
                return
            self._wake_due_here(loop)

    def _wake_due_here(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            due = []
            while self._sleepers and self._sleepers[0][0] <= self._elapsed:
                due.append(heapq.heappop(self._sleepers)[2])
            waiting = any(not woken.done() for _, _, woken in self._sleepers)
        for woken in due:
            if not woken.done():
                woken.set_result(None)
        if waiting:
            self._move_soon(loop)
