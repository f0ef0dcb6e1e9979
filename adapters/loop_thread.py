"""A blocking client in a daemon thread with an event loop of its own, for an SDK
client that runs its loop itself (`run_until_complete`, which fails inside the
server's running loop) and has no way to be stopped from outside: `stop` stops that
loop and waits a few seconds for the thread; `wind_down` cancels what still runs on
the loop and lets the client close its connection before the loop is closed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable

__all__ = ["LoopThread", "wind_down"]

logger = logging.getLogger(__name__)


class LoopThread:
    """`run(loop)` in a daemon thread named `name`, `loop` the thread's own event loop
    (closed once `run` returns)."""

    def __init__(self, name: str, run: Callable[[asyncio.AbstractEventLoop], None]) -> None:
        self._name = name
        self._run = run
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False

    @property
    def stopping(self) -> bool:
        """Whether `stop` was asked for: the client ending now is no failure."""
        return self._stopping

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the thread; idempotent."""
        if self._thread is not None:
            return
        self._stopping = False
        self._thread = threading.Thread(target=self._main, name=self._name, daemon=True)
        self._thread.start()

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and wait (`timeout` seconds at most) for the thread."""
        if self._thread is not None:
            await asyncio.to_thread(self._stop, timeout)

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            self._run(loop)
        finally:
            loop.close()

    def _stop(self, timeout: float) -> None:
        self._stopping = True
        loop, thread = self._loop, self._thread
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout)
        self._thread = None
        self._loop = None


def wind_down(loop: asyncio.AbstractEventLoop, disconnect: Callable[[], Awaitable[object]],
              what: str) -> None:
    """In `loop`'s thread, once its client returned: cancel every task still on `loop`
    (receive loops, pings), wait for them, then `disconnect()`; a failure of either is
    logged (`what` names the client)."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    try:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(disconnect())
    except Exception as exc:
        logger.info("%s cleanup: %s", what, type(exc).__name__)
