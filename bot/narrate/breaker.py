"""A circuit breaker over model calls: after `threshold` outages in a row (transport
errors, timeouts, 5xx: the narrator reports only those) no call is made for
`cooldown_s`, so every section falls back at once instead of timing out call after
call; then one call is let through to probe, and a success closes it again. An answer
that does not fit its schema is that call's failure, not a sign the endpoint is down."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.clock import SYSTEM_CLOCK, Clock

THRESHOLD = 5
COOLDOWN_S = 300.0


class Breaker:
    """The circuit, its cooldown and the last failure's time on `clock`."""

    def __init__(self, *, threshold: int = THRESHOLD, cooldown_s: float = COOLDOWN_S,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self.clock = clock
        self.failures = 0
        self.opened_at: float | None = None
        self.last_failure: str | None = None
        self.last_failure_at: datetime | None = None
        self.opened_because: str | None = None

    def allow(self) -> bool:
        """Whether a call may be made now (half-open after the cooldown: yes)."""
        return (self.opened_at is None
                or self.clock.monotonic() - self.opened_at >= self.cooldown_s)

    def success(self) -> None:
        self.failures = 0
        self.opened_at = None
        self.opened_because = None

    def failure(self, reason: str) -> None:
        self.failures += 1
        self.last_failure = reason
        self.last_failure_at = self.clock.now()
        if self.failures >= self.threshold and (self.opened_at is None or self.allow()):
            self.opened_at = self.clock.monotonic()
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
            status["last_failure_at"] = f"{self.last_failure_at:%Y-%m-%dT%H:%M:%SZ}"
        if self.opened_at is not None:
            status["reason"] = self.opened_because
            open_for = self.clock.monotonic() - self.opened_at
            status["retry_in_s"] = max(0, round(self.cooldown_s - open_for))
        return status
