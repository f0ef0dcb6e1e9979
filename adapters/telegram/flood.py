"""Telegram's flood control: a 429 is retried after the `retry_after` it names."""

from __future__ import annotations

import asyncio
import itertools
import logging
import warnings
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter
from telegram.warnings import PTBDeprecationWarning

__all__ = ["RetryAfterLimiter", "retry_after_seconds"]

logger = logging.getLogger(__name__)


def retry_after_seconds(error: RetryAfter) -> float:
    """The wait Telegram asked for, whether PTB gives it as seconds or (with
    `PTB_TIMEDELTA=true`, the future default) as a `timedelta`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value: object = error.retry_after
    if isinstance(value, timedelta):
        return value.total_seconds()
    return float(value)  # type: ignore[arg-type]


class RetryAfterLimiter(BaseRateLimiter[None]):
    """Retries a request Telegram refused with 429 after the `retry_after` it named.

    PTB's `AIORateLimiter` does this too but needs `aiolimiter`, which is not a
    dependency; prdigest sends a few messages a week per chat, so reacting to flood
    control is enough and nothing is throttled up front. A wait longer than
    `max_wait` seconds is not waited for: the error goes up to the caller.
    """

    def __init__(self, *, max_retries: int = 3, max_wait: float = 60.0) -> None:
        self.max_retries = max_retries
        self.max_wait = max_wait

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | dict[str, Any] | list[dict[str, Any]]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: None,
    ) -> bool | dict[str, Any] | list[dict[str, Any]]:
        for attempt in itertools.count(1):
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as error:
                wait = retry_after_seconds(error)
                if attempt > self.max_retries or wait > self.max_wait:
                    raise
                logger.warning("telegram %s: flood control, retrying in %.1f s (attempt %d)",
                               endpoint, wait, attempt)
                await asyncio.sleep(wait + 0.1)
        raise AssertionError("unreachable")  # pragma: no cover
