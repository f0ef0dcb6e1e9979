"""How each GitHub request is made: retries, rate-limit waits and error wording.

`RequestPolicy` wraps every call the sources make (GraphQL or REST): it retries
5xx answers and network failures with backoff, waits out a rate limit whose reset
is near and otherwise fails with the reset time, and turns the rest into one-line
`SourceError`s. PyGithub's own retry is switched off (`retry=None`) so that waits
are decided here, once, on the source's `Clock` (a test's virtual clock passes them at
once and records them).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import requests
from github.GithubException import (
    BadCredentialsException,
    GithubException,
    RateLimitExceededException,
)
from github.Requester import Requester
from urllib3.exceptions import NameResolutionError

from bot.clock import SYSTEM_CLOCK, Clock
from bot.errors import SourceError

log = logging.getLogger(__name__)

T = TypeVar("T")

class RateLimited(Exception):
    """A rate limit reported inside a 200 answer (GraphQL's RATE_LIMITED error)."""

    def __init__(self, headers: dict[str, Any], message: str) -> None:
        super().__init__(message)
        self.headers = headers


class RateLimitReached(SourceError):
    """GitHub's rate limit, not waited for: `wait_seconds` is how long until its window
    ends (the reset time, or Retry-After), so a caller can stay quiet until then."""

    def __init__(self, message: str, *, wait_seconds: float) -> None:
        super().__init__(message)
        self.wait_seconds = wait_seconds


@dataclass(frozen=True)
class RetrySettings:
    """How failed GitHub requests are met.

    A failure is retried `retries` times, after `backoff_seconds` doubling each time;
    a rate limit whose reset (or Retry-After) is at most `max_wait_seconds` away is
    waited for, at most `max_rate_waits` times in one call; a later one fails at once
    with the reset time in UTC. `retry_unresolved=False` fails at once when GitHub's
    host name does not resolve (offline, or a mistyped `github.api_url`), where
    waiting rarely helps a command."""

    retries: int = 3
    backoff_seconds: float = 1.0
    max_wait_seconds: float = 60.0
    max_rate_waits: int = 3
    retry_unresolved: bool = True


DEFAULT_RETRY = RetrySettings()


class RequestPolicy:
    """Retries, rate-limit waits and error wording around each PyGithub call, as
    `settings` say (`RetrySettings`).

    `on_retry(reason, delay)` hears of each retry before its wait (a command line says
    it is retrying). `clock` tells the time GitHub's reset times are compared with and
    lets the waits pass (`Clock.pause`: the requests run in worker threads).
    """

    def __init__(
        self,
        requester: Requester,
        *,
        api_url: str,
        token_source: str,
        clock: Clock = SYSTEM_CLOCK,
        settings: RetrySettings = DEFAULT_RETRY,
        on_retry: Callable[[str, float], None] | None = None,
    ) -> None:
        self.requester = requester
        self.on_retry = on_retry
        self.settings = settings
        self.api_url = api_url
        self.token_source = token_source
        self.clock = clock

    def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` (one or more requests) under the policy; return its result."""
        failures = 0
        waits = 0
        while True:
            self._respect_budget()
            try:
                return fn()
            except RateLimited as exc:
                delay = self._rate_delay(exc.headers, str(exc), waits)
                waits, why = waits + 1, "rate limited"
            except RateLimitExceededException as exc:
                delay = self._rate_delay(exc.headers or {}, exc.message or "", waits)
                waits, why = waits + 1, "rate limited"
            except BadCredentialsException as exc:
                raise SourceError(
                    f"GitHub rejected the token {self.token_source} "
                    f"({exc.status} {exc.message or 'Bad credentials'})"
                ) from None
            except GithubException as exc:
                if exc.status == 429 or (exc.status == 403 and _looks_limited(exc)):
                    delay = self._rate_delay(exc.headers or {}, exc.message or "", waits)
                    waits, why = waits + 1, "rate limited"
                elif exc.status == 401:
                    raise SourceError(
                        f"GitHub rejected the token {self.token_source} "
                        f"({exc.status} {exc.message or 'Unauthorized'})"
                    ) from None
                elif exc.status >= 500:
                    failures += 1
                    why = f"{exc.status} {exc.message or 'server error'}"
                    if failures > self.settings.retries:
                        raise SourceError(
                            f"GitHub keeps failing ({why}) after {failures} attempts; try "
                            "again later") from None
                    delay = _retry_after(exc.headers or {}) or self._backoff(failures)
                else:
                    raise
            except (requests.Timeout, requests.ConnectionError,
                    requests.exceptions.ChunkedEncodingError) as exc:
                failures += 1
                why = _network_reason(exc)
                if why == HOST_NOT_FOUND and not self.settings.retry_unresolved:
                    raise SourceError(f"cannot reach GitHub at {self.api_url} ({why})") from None
                if failures > self.settings.retries:
                    raise SourceError(
                        f"cannot reach GitHub at {self.api_url} ({why}) "
                        f"after {failures} attempts"
                    ) from None
                delay = self._backoff(failures)
            except requests.RequestException as exc:
                raise SourceError(
                    f"cannot talk to GitHub at {self.api_url} ({type(exc).__name__})"
                ) from None
            log.info("GitHub request failed (%s); retrying in %.1f s", why, delay)
            if self.on_retry is not None:
                self.on_retry(why, delay)
            self.clock.pause(delay)
            if waits:
                self._forget_budget()

    def _backoff(self, failures: int) -> float:
        return float(self.settings.backoff_seconds * 2 ** (failures - 1))

    def _respect_budget(self) -> None:
        """Before a request: when the last answer left no budget, wait or fail now."""
        remaining, _ = self.requester.rate_limiting
        reset = self.requester.rate_limiting_resettime
        if remaining == 0 and reset > self.clock.now().timestamp():
            delay = self._rate_delay({"x-ratelimit-reset": str(reset)}, "budget spent", 0)
            self.clock.pause(delay)
            self._forget_budget()

    def _forget_budget(self) -> None:
        """After waiting for a reset, the last answer's budget no longer holds; the next
        answer brings the new one."""
        self.requester.rate_limiting = (-1, -1)

    def _rate_delay(self, headers: dict[str, Any], message: str, waits: int) -> float:
        """Seconds to wait for a rate limit, or `RateLimitReached` naming its reset."""
        now = self.clock.now().timestamp()
        headers = {k.lower(): v for k, v in headers.items()}
        delay = _retry_after(headers)
        reset_header = headers.get("x-ratelimit-reset")
        if delay is None and reset_header is not None:
            delay = max(float(reset_header) - now, 0.0) + 1.0
        if delay is None:
            delay = 60.0  # GitHub's advice for a secondary limit without headers
        if delay > self.settings.max_wait_seconds or waits >= self.settings.max_rate_waits:
            reset = datetime.fromtimestamp(now + delay, UTC).replace(microsecond=0)
            minutes = max(round(delay / 60), 1)
            raise RateLimitReached(
                f"GitHub rate limit reached ({message.rstrip('.') or 'limited'}); it resets at "
                f"{reset:%Y-%m-%d %H:%M:%S} UTC, in about {minutes} min", wait_seconds=delay)
        return delay


def _retry_after(headers: dict[str, Any]) -> float | None:
    value = {k.lower(): v for k, v in headers.items()}.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _looks_limited(exc: GithubException) -> bool:
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    message = (exc.message or "").lower()
    return (
        headers.get("x-ratelimit-remaining") == "0"
        or "retry-after" in headers
        or "rate limit" in message
    )


HOST_NOT_FOUND = "host not found"


def _network_reason(exc: Exception) -> str:
    if isinstance(exc, requests.Timeout):
        return "timed out"
    if _unresolved(exc):
        return HOST_NOT_FOUND
    text = str(exc)
    for needle, reason in (
        ("Connection refused", "connection refused"),
        ("Network is unreachable", "network unreachable"),
    ):
        if needle in text:
            return reason
    return type(exc).__name__


def _unresolved(exc: BaseException) -> bool:
    """Whether the failure is a host name that did not resolve: urllib3's
    `NameResolutionError` (or the `socket.gaierror` under it) anywhere in the chain
    requests wraps it in."""
    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, NameResolutionError | socket.gaierror):
            return True
        todo += [*item.args, item.__cause__, item.__context__, getattr(item, "reason", None)]
    return False
