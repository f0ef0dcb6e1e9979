"""The one send loop of every platform: wait for a turn in the message's pacing lanes,
send, read a failure through the platform's error mapping, and then hold the lanes off
(a 429), back off (a 5xx a key makes safe to repeat), go again at once (a renewed
token), or give up: refused, in doubt (the request went out, its answer was lost), or
out of tries.

A platform gives only what is its own: the one call that sends a message, its error
mapping (an `Outcome` for each failure), its `Limits` (tries, first back-off, the
longest wait for a turn) and, where it can tell, a lookup of the parts of a message
that already arrived. Every decision made of those is here: the parts of a split
message go through `send_parts`, which skips those already delivered and says how far
a failed delivery got and whether its last part is in doubt; `resume_parts` finishes a
delivery left in doubt from what the lookup found.

What stays with the platforms, because an SDK owns it:
- slack_sdk retries its other Web API calls itself (a dropped connection, a 429 on
  anything but chat.postMessage); `adapters.slack.outbound` only puts those waits on
  the process clock. chat.postMessage goes through this loop.
- python-telegram-bot calls a `BaseRateLimiter` around every Bot API request; the
  loop runs inside Telegram's (`adapters.telegram.flood`), so the one call is PTB's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from bot.clock import SYSTEM_CLOCK, Clock
from bot.pacing import Lane, NoTurn, Pacer

T = TypeVar("T")
M = TypeVar("M")
E = TypeVar("E", bound=BaseException)

logger = logging.getLogger(__name__)

# Waited beyond a hold-off sent without lanes, so the retry lands after it.
HOLD_MARGIN_SECONDS = 0.1


@dataclass(frozen=True)
class Limits:
    """How hard a platform's sends are tried: `attempts` tries of one message;
    `max_wait` seconds at most waited for a turn; `backoff` seconds before the second
    try of a failure safe to repeat, doubled for each try after; a hold-off longer than
    `longest_hold` (None: any) not waited for - its refusal raised at once."""

    attempts: int
    max_wait: float
    backoff: float = 0.5
    longest_hold: float | None = None

    @property
    def tries(self) -> int:
        return max(1, self.attempts)

    def pause(self, number: int) -> float:
        """The back-off after failed try `number` (1, 2, ...)."""
        return self.backoff * 2.0 ** (number - 1)


@dataclass(frozen=True)
class Outcome:
    """What a platform's error mapping makes of a failed try: `error` is what the send
    raises when it is not tried again. This one: refused, raised at once."""

    error: BaseException
    retry: bool = False


@dataclass(frozen=True)
class Refused(Outcome):
    """The platform refused, or the request failed where a second try cannot help."""


@dataclass(frozen=True)
class HoldOff(Outcome):
    """Rate limited (a 429): no turn in the lanes for `seconds`, for every sender;
    tried again in the next turn."""

    seconds: float = 1.0
    retry: bool = True


@dataclass(frozen=True)
class BackOff(Outcome):
    """A failure a key makes safe to repeat (a 5xx answer to a post with a uuid):
    tried again after `Limits.pause`, the lanes left to others meanwhile."""

    retry: bool = True


@dataclass(frozen=True)
class TryAgain(Outcome):
    """Tried again in the next turn without waiting (a renewed token)."""

    retry: bool = True


@dataclass(frozen=True)
class InDoubt(Outcome):
    """The request went out and no answer came: the platform may have taken it. Never
    sent again here (that could post twice); `send_parts` reports the part in doubt."""


class AnswerLost(Exception):
    """Raised by a platform's transport when its request went out (the connection was
    made) and no answer came; the default mapping makes it `InDoubt`."""


def header_seconds(headers: Mapping[str, Any] | None, name: str) -> float:
    """The seconds a rate-limit header (`Retry-After` & co, any case) asks to wait; one
    when it is missing or unreadable."""
    named = {str(k).lower(): v for k, v in (headers or {}).items()}
    value = named.get(name.lower(), "1")
    try:
        return max(0.0, float(value[0] if isinstance(value, list) else value))
    except (TypeError, ValueError, IndexError):
        return 1.0


def refused(error: Exception) -> Outcome:
    """The mapping of a platform that retries nothing: every failure refused as it is,
    one whose answer was lost in doubt."""
    return InDoubt(error) if isinstance(error, AnswerLost) else Refused(error)


async def send_in_turn(
    call: Callable[[], Awaitable[T]], outcome: Callable[[Exception], Outcome], *,
    pacer: Pacer, lanes: Sequence[Lane], limits: Limits,
    late: Callable[[NoTurn], BaseException], clock: Clock = SYSTEM_CLOCK,
) -> T:
    """`call()` in its turn of `lanes`, again after each failure `outcome` says may
    pass, until it returns, or the failure is raised: one that may not pass, one after
    the last of `limits.tries`, a hold-off longer than `limits.longest_hold`. A turn
    further away than `limits.max_wait` raises `late(NoTurn)`. Without lanes (a call
    that posts nothing) a hold-off is waited out here, on `clock`."""
    tries = limits.tries
    for number in range(1, tries + 1):
        try:
            await pacer.take_turn(lanes, max_wait=limits.max_wait)
        except NoTurn as too_late:
            raise late(too_late) from None
        try:
            return await call()
        except Exception as failure:
            seen = outcome(failure)
            held = seen.seconds if isinstance(seen, HoldOff) else None
            if held is not None and lanes:
                await pacer.hold_off(lanes, held)
            if (not seen.retry or number >= tries
                    or (held is not None and limits.longest_hold is not None
                        and held > limits.longest_hold)):
                if seen.error is failure:
                    raise
                raise seen.error from None
            if held is not None:
                logger.warning("rate limited: try %d of %d in %.1f s", number + 1, tries,
                               held)
                if not lanes:
                    await clock.sleep(held + HOLD_MARGIN_SECONDS)
            if isinstance(seen, BackOff):
                await clock.sleep(limits.pause(number))
    raise AssertionError("unreachable: at least one attempt is made")  # pragma: no cover


@dataclass(eq=False)
class Stopped(Exception):
    """Sending a split message stopped at part `len(sent)` of `total` with `error`:
    `sent` holds the ids of the parts before it; `in_doubt` when that part's request
    went out and its answer was lost (it may have arrived)."""

    error: BaseException
    sent: list[str]
    total: int
    in_doubt: bool

    def __post_init__(self) -> None:
        super().__init__(str(self.error))


async def send_parts(
    messages: Sequence[M], send: Callable[[int, M], Awaitable[str]], *,
    found: Mapping[int, str] | None = None,
    stopped: Callable[[Stopped], BaseException],
    failure: type[BaseException] = Exception,
    outcome: Callable[[Exception], Outcome] = refused,
) -> list[str]:
    """Each part not already `found` (part -> id) sent in order; the ids of every part.
    A part failing with `failure` raises `stopped(Stopped)`, in doubt as `outcome`
    says (the send loop's error mapping), so the platform can say how far the delivery
    got - or raise the part's error itself."""
    posted: list[str] = []
    found = found or {}
    for part, message in enumerate(messages):
        if part in found:
            posted.append(found[part])
            continue
        try:
            posted.append(await send(part, message))
        except failure as error:
            in_doubt = isinstance(error, Exception) and isinstance(outcome(error), InDoubt)
            raised = stopped(Stopped(error, list(posted), len(messages), in_doubt))
            if raised is error:
                raise
            raise raised from None
    return posted


async def resume_parts(
    messages: Sequence[M], send: Callable[[int, M], Awaitable[str]], *,
    arrived: Callable[[], Awaitable[Mapping[int, str]]], what: str,
    stopped: Callable[[Stopped], BaseException],
    failure: type[BaseException] = Exception,
) -> list[str] | None:
    """A delivery left in doubt, finished: the ids of its parts, after sending those
    `arrived` (the platform's lookup: part -> id) does not find; None when none
    arrived (or the platform cannot tell) - the caller then decides."""
    found = await arrived()
    if not found:
        return None
    logger.info("%s: %d of %d part(s) already arrived", what, len(found), len(messages))
    return await send_parts(messages, send, found=found, stopped=stopped, failure=failure)
