"""How GitHub has been answering, for /healthz."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.clock import SYSTEM_CLOCK, Clock
from bot.events import Event, GitHubAnswered


@dataclass
class GitHubHealth:
    """How GitHub has been answering, for /healthz: a service that serves stale data or
    "try again later" while GitHub fails is degraded, and should say so.

    5xx, network errors, rate limits (403/429) and a rejected token (401) are failures;
    other answers (a 404 for a PR that does not exist) show GitHub is reachable.
    """

    clock: Clock = SYSTEM_CLOCK
    consecutive_failures: int = 0
    last_success_at: datetime | None = None
    last_failure_at: datetime | None = None
    last_failure: str | None = None

    def on(self, event: Event) -> None:
        """Follow GitHub's answers; the server subscribes this to its `Events`."""
        if isinstance(event, GitHubAnswered):
            self.record(event.status)

    def record(self, status: int | str) -> None:
        failed = status == "error" or (isinstance(status, int) and (
            status >= 500 or status in (401, 403, 429)))
        if failed:
            self.consecutive_failures += 1
            self.last_failure_at = self.clock.now()
            self.last_failure = str(status)
        else:
            self.consecutive_failures = 0
            self.last_success_at = self.clock.now()

    @property
    def ok(self) -> bool:
        return self.consecutive_failures == 0

    def status(self) -> dict[str, Any]:
        def at(moment: datetime | None) -> str | None:
            return moment.isoformat() if moment else None

        return {"ok": self.ok, "consecutive_failures": self.consecutive_failures,
                "last_success_at": at(self.last_success_at),
                "last_failure_at": at(self.last_failure_at), "last_failure": self.last_failure}
