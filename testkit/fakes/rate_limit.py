"""A platform's rate limit as the fakes enforce it: the token bucket a real platform keeps
for a bot (all its chats together), so a load test sees the 429s a too-fast sender gets.

The bucket holds `burst` tokens (one second's worth unless told) and gains `per_second`
tokens a second; a call finding it empty is refused and told how long until a token is
back, rounded up to whole seconds as Slack's `Retry-After`, Telegram's `retry_after`
and Feishu's `x-ogw-ratelimit-reset` are. Refusals are counted.
"""

from __future__ import annotations

import math
import threading

from bot.clock import SYSTEM_CLOCK, Clock


class FakeRateLimit:
    """One bucket for every call it is asked about (thread-safe: fakes answer some calls
    off their loop); it refills on `clock`."""

    def __init__(self, per_second: float, burst: float | None = None, *,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        if per_second <= 0:
            raise ValueError("a rate limit needs a positive rate")
        self.per_second = per_second
        self.burst = max(1.0, burst if burst is not None else per_second)
        self.refused = 0
        self.taken = 0
        self._tokens = self.burst
        self.clock = clock
        self._at = clock.monotonic()
        self._lock = threading.Lock()

    def take(self) -> int | None:
        """None when the call may go through (a token is spent), else the whole seconds
        to wait before asking again."""
        with self._lock:
            now = self.clock.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.per_second)
            self._at = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                self.taken += 1
                return None
            self.refused += 1
            return max(1, math.ceil((1.0 - self._tokens) / self.per_second))
