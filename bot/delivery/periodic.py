"""The loop every background task of a replica runs: one pass, then a pause."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any


async def run_every(interval_seconds: float, stop: asyncio.Event,
                    one_pass: Callable[[], Awaitable[Any]], log: logging.Logger,
                    failure: str) -> None:
    """Run `one_pass` every `interval_seconds` until `stop` is set. A pass that raises
    is logged as `failure` and the next one goes on: one bad pass never ends the loop."""
    while not stop.is_set():
        try:
            await one_pass()
        except Exception:
            log.exception(failure)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval_seconds)
