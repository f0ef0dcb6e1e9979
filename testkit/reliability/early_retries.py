"""`prdigest serve` SIGKILLed after acknowledging, with the platforms retrying early.

A real `prdigest serve` (alive mark of `ALIVE_SECONDS`, 10 s) acknowledges ten
questions per platform and takes a merged-PR notice; every answer and the notice are
parked before their platform, and the process is SIGKILLed. A second replica on the same
Redis, already running, then gets every delivery again as a platform retries: at +1 s,
+5 s and +12 s after the kill, and each delivery only until it is acknowledged (a 2xx
ends a platform's retries). The dead process's alive mark still stands at +1 s and +5 s:
those tries must be refused for later, not acknowledged as repeats; by +12 s it has
lapsed, the claims are taken over and everything is answered - once.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from testkit.reliability.crash_after_ack import (
    CrashOutcome,
    answers_of,
    killed_in_flight,
    notices_of,
    send_all,
    wait_answered,
)

RETRY_AT = (1.0, 5.0, 12.0)
"""Seconds after the kill at which the platforms send again what is not acknowledged."""


@dataclass(frozen=True)
class EarlyRetries(CrashOutcome):
    """The crash's outcome, with the statuses each round of retries got and the
    deliveries still unacknowledged after the last."""

    rounds: dict[float, Counter[int]]
    unacknowledged: int


def early_retries(redis_url: str, workdir: Path, *, timeout: float = 60.0,
                  retry_at: tuple[float, ...] = RETRY_AT) -> EarlyRetries:
    """Kill the service with everything in flight; retry on a live replica as the
    platforms do (until acknowledged) at `retry_at` seconds after the kill."""
    with killed_in_flight(redis_url, workdir, timeout=timeout, runner=False,
                          standby=1) as flight:
        replica = flight.standby[0]
        pending = [*flight.questions, flight.notice]
        rounds: dict[float, Counter[int]] = {}
        for at in retry_at:
            time.sleep(max(0.0, flight.killed_at + at - time.monotonic()))
            statuses = send_all(replica.url, pending)
            rounds[at] = Counter(statuses)
            pending = [request for request, status in zip(pending, statuses, strict=True)
                       if not 200 <= status < 300]
        wait_answered(flight.fakes, timeout)
        recovered = time.monotonic() - flight.killed_at - 1.0
        return EarlyRetries(answers=answers_of(flight.fakes),
                            notices=notices_of(flight.fakes), parked=flight.parked,
                            rounds=rounds, unacknowledged=len(pending),
                            recover_seconds=recovered)
