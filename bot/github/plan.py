"""When each week fetched ahead is fetched, and with which credential: GitHub's points
planned with a margin.

The prefetch plan spreads a first run's fetches over the window before the posting
minute by a hash of each (repository, week); left at that, 2,000 repositories' busiest
rolling hour came to 5,057 points against a token's 5,000. Here each fetch keeps its
hashed moment unless the credential it goes to would then spend more than `SHARE` of
its hourly points within an hour; then it waits until the hour before it has room, on
whichever credential that can read the repository gets it there first. Placed in
order, every rolling hour of every credential stays within its share: the window that
ends at any moment holds the fetches placed up to the last one in it, and that one was
placed only if its own hour had room.

A fetch pushed past its post is still planned (the post then fetches it, waiting for
points if need be): the plan says how far the credentials carry, it never drops work.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

SHARE = 0.8
"""Of each credential's hourly points, what the plan may spend in any rolling hour: the
rest is margin for estimates that were low, report pages and the poller."""
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Lane:
    """One credential as the plan sees it: its name, its points an hour, and which
    repositories it can read."""

    name: str
    hourly: int
    serves: Callable[[str], bool]


@dataclass(frozen=True)
class Fetch:
    """One fetch to place: its repository, its hashed moment and its points."""

    repo: str
    at: datetime
    points: int


@dataclass(frozen=True)
class Placed:
    at: datetime
    lane: str


def pace(fetches: Sequence[Fetch], lanes: Sequence[Lane], *, share: float = SHARE
         ) -> list[Placed | None]:
    """Each fetch's moment and credential, in the order given (None: no credential can
    read its repository). `fetches` in order of their moments."""
    spent: dict[str, deque[tuple[datetime, int]]] = {lane.name: deque() for lane in lanes}
    last: dict[str, datetime] = {}
    placed: list[Placed | None] = []
    for fetch in fetches:
        best: tuple[datetime, int, str] | None = None
        for order, lane in enumerate(lanes):
            if not lane.serves(fetch.repo):
                continue
            at = _earliest(spent[lane.name], max(fetch.at, last.get(lane.name, fetch.at)),
                           fetch.points, int(lane.hourly * share))
            if best is None or (at, order) < best[:2]:
                best = (at, order, lane.name)
        if best is None:
            placed.append(None)
            continue
        at, _, name = best
        lane_spent = spent[name]
        while lane_spent and lane_spent[0][0] <= at - HOUR:  # later fetches here come after
            lane_spent.popleft()
        lane_spent.append((at, fetch.points))
        last[name] = at
        placed.append(Placed(at, name))
    return placed


def _earliest(spent: deque[tuple[datetime, int]], start: datetime, points: int,
              allowed: int) -> datetime:
    """The first moment from `start` at which the hour before it, with `points` more,
    stays within `allowed`. A fetch larger than `allowed` on its own goes once the hour
    before it is empty."""
    at = start
    while True:
        window = [(moment, cost) for moment, cost in spent if moment > at - HOUR]
        if not window or sum(cost for _, cost in window) + points <= allowed:
            return at
        at = window[0][0] + HOUR  # just after the oldest leaves the hour
