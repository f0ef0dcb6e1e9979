"""The loop every background task of a replica runs: one pass, then a pause."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.clock import Clock
from bot.store.coordination import StoreUnavailable


async def run_every(clock: Clock, interval_seconds: float, stop: asyncio.Event,
                    one_pass: Callable[[], Awaitable[Any]], log: logging.Logger,
                    failure: str) -> None:
    """Run `one_pass` every `interval_seconds` of `clock` until `stop` is set. A pass that raises
    is logged as `failure` and the next one goes on: one bad pass never ends the loop."""
    while not stop.is_set():
        try:
            await one_pass()
        except Exception as exc:
            log_failed_pass(log, failure, exc)
        await clock.wait(stop, interval_seconds)


def log_failed_pass(log: logging.Logger, failure: str, exc: Exception) -> None:
    """One line for a pass that failed because Redis is down (expected while it is, every
    pass: a traceback a minute would bury the log), the traceback for anything else."""
    if isinstance(exc, StoreUnavailable):
        log.warning("%s: Redis unavailable (%s); trying again next pass", failure, exc)
    else:
        log.exception(failure)
