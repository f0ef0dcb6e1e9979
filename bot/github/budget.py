"""GitHub's GraphQL points, as the latest answers told them: one place for the budget.

Every GraphQL request asks for `rateLimit { cost remaining resetAt }`; the backend hands
each answer to `Budget.record`. The budget keeps the points left and when they refill,
adds up what each fetch cost (per thread, so fetches running side by side are priced
apart), logs one INFO line per fetch, and remembers what a repository's week cost last
time, so the scheduler can tell whether the points left cover the next repository
(`short_of`) and how long to wait for the refill (`seconds_to_reset`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.clock import SYSTEM_CLOCK, Clock
from bot.github.plan import Fetch, Lane, Placed, pace

log = logging.getLogger(__name__)

WEEK_POINTS_GUESS = 10
"""What a repository's week is taken to cost before one was measured (30 PRs: ~6-9)."""
COUNTED_SHARE = 3
"""A week read for its counts only costs about a third of a full read (3 points for 8)."""
HOURLY_POINTS = 5000
"""A credential's GraphQL points an hour until GitHub's answers say (a personal token's;
an App installation's `limit` grows with the organisation, up to 12,500)."""

SAME_WINDOW = timedelta(seconds=2)
"""`resetAt`s this close belong to one hourly window."""


@dataclass(frozen=True)
class RateLimit:
    """One answer's `rateLimit`: what the request cost, what is left, when it refills."""

    cost: int
    remaining: int
    reset_at: datetime
    limit: int | None = None


def parse_rate_limit(raw: Mapping[str, Any]) -> RateLimit | None:
    """The `rateLimit` object of an answer; None when it is not one."""
    try:
        reset = datetime.fromisoformat(str(raw["resetAt"]).replace("Z", "+00:00"))
        limit = raw.get("limit")
        return RateLimit(cost=int(raw["cost"]), remaining=int(raw["remaining"]),
                         reset_at=reset if reset.tzinfo else reset.replace(tzinfo=UTC),
                         limit=int(limit) if limit is not None else None)
    except (KeyError, TypeError, ValueError):
        return None


class Budget:
    """The points one GitHub identity (a token, an App installation) has left.

    `on_update(rate)` is told of every answer (for `/metrics`); `clock` tells whether
    a refill is still ahead (a test's virtual clock moves); `name` says which
    credential it is (never its value).
    """

    def __init__(self, *, on_update: Callable[[RateLimit], None] | None = None,
                 clock: Clock = SYSTEM_CLOCK, name: str = "github") -> None:
        self.on_update = on_update
        self.clock = clock
        self.name = name
        self.limit = HOURLY_POINTS
        self.remaining: int | None = None
        self.reset_at: datetime | None = None
        self.spent = 0
        self._week_cost: dict[str, int] = {}
        self._lock = threading.Lock()
        self._local = threading.local()

    def record(self, raw: Mapping[str, Any]) -> None:
        """Keep one answer's `rateLimit`."""
        rate = parse_rate_limit(raw)
        if rate is None:
            return
        with self._lock:
            self.spent += rate.cost
            if rate.limit:
                self.limit = rate.limit
            if self.reset_at is None or self.remaining is None or \
                    rate.reset_at > self.reset_at + SAME_WINDOW:
                self.remaining, self.reset_at = rate.remaining, rate.reset_at
            elif rate.reset_at >= self.reset_at - SAME_WINDOW:
                # Answers of one window may arrive out of order: the least left is latest.
                self.remaining = min(self.remaining, rate.remaining)
        tally = getattr(self._local, "tally", None)
        if tally is not None:
            tally[0] += rate.cost
            tally[1] += 1
        if self.on_update is not None:
            self.on_update(rate)

    def week_cost(self, repo: str) -> int:
        """Points the repository's last week fetch cost (a guess before the first)."""
        return self.known_week_cost(repo) or WEEK_POINTS_GUESS

    def known_week_cost(self, repo: str) -> int | None:
        """What the repository's last week fetch cost here; None before one."""
        with self._lock:
            return self._week_cost.get(repo)

    def for_repo(self, repo: str) -> Budget:
        """The budget a fetch of `repo` spends: this one (a pool picks among its own)."""
        return self

    def lanes(self) -> list[Lane]:
        """This credential as the prefetch plan sees it: every repository, its limit."""
        return [Lane(self.name, self.limit, lambda repo: True)]

    def pace(self, fetches: Sequence[Fetch]) -> list[Placed | None]:
        """Moments for `fetches` within `SHARE` of the hourly points (`plan.pace`)."""
        return pace(fetches, self.lanes())

    def short_of(self, points: int) -> bool:
        """Whether the last answer left fewer than `points`, with the refill still ahead."""
        with self._lock:
            remaining, reset_at = self.remaining, self.reset_at
        return (remaining is not None and reset_at is not None and remaining < points
                and reset_at > self.clock.now())

    def seconds_to_reset(self) -> float:
        """Seconds until the points refill (0 when unknown or past)."""
        with self._lock:
            reset_at = self.reset_at
        if reset_at is None:
            return 0.0
        return max((reset_at - self.clock.now()).total_seconds(), 0.0)

    @contextlib.contextmanager
    def fetch(self, repo: str, what: str) -> Iterator[None]:
        """Price one fetch (what this thread's requests cost) and log it once."""
        outer = getattr(self._local, "tally", None)
        tally = [0, 0]
        self._local.tally = tally
        try:
            yield
        finally:
            self._local.tally = outer
            if outer is not None:
                outer[0] += tally[0]
                outer[1] += tally[1]
        if outer is not None or not tally[1]:
            return  # priced by the fetch around it, or asked GitHub nothing
        if what == "week":
            with self._lock:
                self._week_cost[repo] = max(tally[0], 1)
        with self._lock:
            remaining, reset_at = self.remaining, self.reset_at
        log.info("github: %s %s cost %d point(s) in %d request(s); %s left, refilled at %s",
                 repo, what, tally[0], tally[1], "?" if remaining is None else remaining,
                 f"{reset_at:%H:%M:%S} UTC" if reset_at else "?")
