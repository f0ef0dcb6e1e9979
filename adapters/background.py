"""The work an adapter does after acknowledging a delivery - an answer, a preview - as
tasks it keeps until they end: a platform waits seconds at most for its acknowledgment,
the answer comes afterwards, and shutdown and tests wait for what is still being
written (`drain`), which /healthz counts."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class Background:
    """The tasks an adapter has begun and not yet seen end."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` in a task of the running loop, kept until it ends."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, timeout: float | None = None) -> None:
        """Wait for every task, those begun meanwhile too; at most `timeout` seconds
        for any one round of them."""
        while self._tasks:
            done, _ = await asyncio.wait(set(self._tasks), timeout=timeout)
            if not done:
                break
