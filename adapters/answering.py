"""The answers an adapter is writing, after the platform has had its acknowledgement.

A webhook admits a delivery before it answers the platform (`admit`) and writes the
answer afterwards, in a task of the server's loop; a long connection hands its
deliveries over from a thread of its own. `Answers` keeps those tasks - each one
counted from the moment it is handed over, until it ends - so `/healthz` can tell how
many are in flight and shutdown can wait for them (`drain`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from bot.chat.inbound import Inbox, Question
from bot.clock import SYSTEM_CLOCK, Clock
from bot.models import Admission

__all__ = ["Answers", "admit"]

logger = logging.getLogger(__name__)

Work = Coroutine[Any, Any, None]


class Answers:
    """The answer tasks of one adapter; `clock`: what the wait for a task still on its
    way from another thread passes on."""

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        self._tasks: set[asyncio.Task[None]] = set()
        self._scheduled = 0
        self._scheduled_lock = threading.Lock()

    def __len__(self) -> int:
        """The answers in flight, those on their way from another thread included."""
        return len(self._tasks) + self._scheduled

    def spawn(self, work: Work) -> None:
        """`work` as a task of the running loop, kept until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def spawn_in(self, loop: asyncio.AbstractEventLoop, work: Callable[[], Work]) -> None:
        """`work()` as a task of `loop`, from its own thread or any other."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self.spawn(work())
            return
        with self._scheduled_lock:
            self._scheduled += 1
        loop.call_soon_threadsafe(self._arrived, work)

    def _arrived(self, work: Callable[[], Work]) -> None:
        with self._scheduled_lock:
            self._scheduled -= 1
        self.spawn(work())

    async def drain(self, timeout: float) -> bool:
        """Wait until every answer so far has ended, for at most `timeout` seconds of
        real time (the answers are requests in flight, which a virtual clock's deadline
        would pass before they end); False when some are still running."""
        try:
            await asyncio.wait_for(self._idle(), timeout)
        except TimeoutError:
            return False
        return True

    async def _idle(self) -> None:
        while self._tasks or self._scheduled:
            if self._tasks:
                await asyncio.wait(set(self._tasks))
            else:
                # A delivery of another thread, on its way to this loop.
                await self._clock.sleep(0.01)


async def admit(inbox: Inbox, question: Question) -> Admission:
    """The inbox's admission of a delivery the platform waits to hear back about; one
    held by another process is logged ("later": the platform is asked to send it
    again)."""
    admission = await inbox.admit(question)
    if admission == "later":
        logger.info("%s: delivery %s is held by another process; asked to send it again",
                    question.platform, question.delivery_key)
    return admission
