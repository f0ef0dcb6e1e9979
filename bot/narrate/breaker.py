"""A circuit breaker over model calls: after `threshold` outages in a row (transport
errors, timeouts, 5xx: the narrator reports only those) no call is made for
`cooldown_s`, so every section falls back at once instead of timing out call after
call; then one call is let through to probe, and a success closes it again. An answer
that does not fit its schema is that call's failure, not a sign the endpoint is down."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

THRESHOLD = 5
COOLDOWN_S = 300.0


class Breaker:
    def __init__(self, *, threshold: int = THRESHOLD, cooldown_s: float = COOLDOWN_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self.clock = clock
        self.failures = 0
        self.opened_at: float | None = None
        self.last_failure: str | None = None
        self.last_failure_at: float | None = None
        self.opened_because: str | None = None

    def allow(self) -> bool:
        """Whether a call may be made now (half-open after the cooldown: yes)."""
        return self.opened_at is None or self.clock() - self.opened_at >= self.cooldown_s

    def success(self) -> None:
        self.failures = 0
        self.opened_at = None
        self.opened_because = None

    def failure(self, reason: str) -> None:
        self.failures += 1
        self.last_failure = reason
        self.last_failure_at = time.time()
        if self.failures >= self.threshold and (self.opened_at is None or self.allow()):
            self.opened_at = self.clock()
            self.opened_because = f"{self.failures} failed calls in a row, last: {reason}"

    @property
    def state(self) -> str:
        if self.opened_at is None:
            return "closed"
        return "half-open" if self.allow() else "open"

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = {"circuit": self.state, "failures_in_a_row": self.failures,
                                  "last_failure": self.last_failure}
        if self.last_failure_at is not None:
            status["last_failure_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                      time.gmtime(self.last_failure_at))
        if self.opened_at is not None:
            status["reason"] = self.opened_because
            status["retry_in_s"] = max(0, round(self.cooldown_s - (self.clock() - self.opened_at)))
        return status
