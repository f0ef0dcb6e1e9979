"""Background answers some of which are handed over from another thread: a long
connection's client runs in a thread of its own (`adapters.loop_thread`) and hands
each delivery to the server's loop. Each is counted from the moment it is handed over,
so `/healthz` and shutdown see it before its task exists.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from adapters.background import Background
from bot.clock import SYSTEM_CLOCK, Clock

__all__ = ["Handover"]

Work = Coroutine[Any, Any, None]


class Handover(Background):
    """`Background` tasks, those on their way from another thread counted too; `clock`:
    what the wait for one still on its way passes on."""

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__()
        self._clock = clock
        self._on_the_way = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return super().__len__() + self._on_the_way

    def spawn_in(self, loop: asyncio.AbstractEventLoop, work: Callable[[], Work]) -> None:
        """`work()` as a task of `loop`, from its own thread or any other."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self.spawn(work())
            return
        with self._lock:
            self._on_the_way += 1
        loop.call_soon_threadsafe(self._arrived, work)

    def _arrived(self, work: Callable[[], Work]) -> None:
        with self._lock:
            self._on_the_way -= 1
        self.spawn(work())

    async def settle(self, timeout: float) -> bool:
        """Wait until every answer so far has ended, for at most `timeout` seconds of
        real time (the answers are requests in flight, which a virtual clock's deadline
        would pass before they end); False when some are still running."""
        try:
            await asyncio.wait_for(self._settled(), timeout)
        except TimeoutError:
            return False
        return True

    async def _settled(self) -> None:
        while len(self):
            if super().__len__():
                await self.drain()
            else:
                # A delivery of another thread, on its way to this loop.
                await self._clock.sleep(0.01)
