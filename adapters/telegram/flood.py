"""Telegram's flood control: each message waits for its turn in the bot's and the chat's
pacing lanes (`bot.pacing`), and a 429 holds those lanes off for the `retry_after` it
names - for every replica when the lanes live in Redis - before the message is tried
again in its next turn."""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter
from telegram.warnings import PTBDeprecationWarning

from adapters.paced import Paced
from adapters.sending import HoldOff, Outcome, refused

__all__ = ["PacedLimiter", "outcome", "retry_after_seconds"]

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


def paced(endpoint: str) -> bool:
    """Whether a Bot API method posts a message to a chat (and so waits for a turn)."""
    return endpoint.startswith(("send", "copyMessage", "forwardMessage"))


class PacedLimiter(BaseRateLimiter[None]):
    """Sends each message (`paced` methods) through the shared loop in its turn of its
    chat's lanes (`adapters.paced`); a request Telegram refused with 429 holds its lanes off
    for the `retry_after` it named and goes again in its next turn, as the limits allow
    (their tries; a turn further away than their `max_wait`, or a hold longer than their
    `longest_hold`, is not waited for): the flood-control error goes up to the caller.
    Other methods go at once (a 429 on them is waited out on the clock)."""

    def __init__(self, paced: Paced) -> None:
        self.paced = paced

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
        chat = data.get("chat_id")
        return await self.paced.send(
            lambda: callback(*args, **kwargs), outcome,
            chat=str(chat) if paced(endpoint) and chat is not None else None,
            late=lambda late: RetryAfter(timedelta(seconds=math.ceil(late.seconds))))


def outcome(error: Exception) -> Outcome:
    """Telegram's error mapping: a 429 holds off for its `retry_after`; a request whose
    answer was lost is in doubt; anything else is refused."""
    if isinstance(error, RetryAfter):
        return HoldOff(error, seconds=retry_after_seconds(error))
    return refused(error)
