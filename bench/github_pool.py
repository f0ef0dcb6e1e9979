"""Pools of 1, 2 and 4 GitHub credentials (personal tokens, 5,000 points an hour each)
for an organisation's 2,000 repositories, at the points measured per repository on the
fake GitHub (`bench.github_points`):

- the cold-cache posting minute: every repository's week and the week before fetched
  at once (a first deployment, Redis restarted without persistence, channels added that
  morning), each fetch on the credential the real pool gives it (`BudgetPool.member_for`,
  the schedule's own choice), waiting for a refill as the schedule waits when none has
  the points; GitHub's hourly windows and a fetch's time (`FETCH_SECONDS`) simulated on
  a virtual clock;
- the first run's prefetch plan (`prefetch_plan` with the pool): the busiest rolling
  hour of each credential, against 80% of its hourly points.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from bench.first_run import ORG_REPOS, WINDOW, RepoPoints
from bot.config import ChannelConfig, Config, RepoConfig
from bot.delivery.prefetch import prefetch_plan
from bot.github.budget import Budget
from bot.github.plan import HOUR, SHARE
from bot.github.pool import BudgetPool, Credential, Member
from bot.github.source import GitHubSource
from bot.week import week_period
from testkit.clock import VirtualClock
from testkit.fakes.github_points import LIMIT

POOLS = (1, 2, 4)
FETCH_SECONDS = 0.05
"""A fetch's own time at the posting minute (16 at once, ~0.8 s each): small beside the
hours GitHub's points decide."""


class Measured(Budget):
    """A credential that knows each repository's measured price (a pool after a run)."""

    def __init__(self, prices: dict[str, int], **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.prices = prices

    def known_week_cost(self, repo: str) -> int | None:
        return self.prices.get(repo)


class Hour:
    """GitHub's hourly window of one credential: it starts with the first request."""

    def __init__(self) -> None:
        self.reset_at = -1.0
        self.remaining = LIMIT

    def charge(self, now: float, points: int) -> dict[str, object]:
        if now >= self.reset_at:
            self.reset_at, self.remaining = now + 3600, LIMIT
        self.remaining -= points
        reset = datetime.fromtimestamp(self.reset_at, UTC).isoformat()
        return {"cost": points, "remaining": self.remaining, "resetAt": reset, "limit": LIMIT}


def _pool(size: int, config: Config, prices: dict[str, int], clock: VirtualClock
          ) -> BudgetPool:
    members = []
    for n in range(size):
        name = "GITHUB_TOKEN" if n == 0 else f"GITHUB_TOKEN_{n + 1}"
        budget = Measured(prices, clock=clock, name=name)
        source = GitHubSource(config, token=f"ghp_bench_{n}", base_url="http://127.0.0.1:9",
                              budget=budget, clock=clock)
        members.append(Member(Credential(name, token=f"ghp_bench_{n}"), source))
    return BudgetPool(members, clock=clock)


def cold_minute(size: int, config: Config, fetches: Sequence[tuple[str, int]],
                prices: dict[str, int]) -> tuple[float, int]:
    """(hours until the last fetch is done, fetches that waited for a refill)."""
    clock = VirtualClock(datetime(2026, 7, 27, 1, 0, tzinfo=UTC))
    start = clock.monotonic()
    pool = _pool(size, config, prices, clock)
    hours = {m.credential.name: Hour() for m in pool.members}
    waited = 0
    for repo, points in fetches:
        member = pool.member_for(repo)
        if member.budget.short_of(points):  # every credential spent: the refill
            clock.advance(member.budget.seconds_to_reset() + 1.0)
            waited += 1
        member.budget.record(hours[member.credential.name].charge(clock.now().timestamp(),
                                                                  points))
        pool.refresh()
        clock.advance(FETCH_SECONDS)
    for member in pool.members:
        member.source.close()
    return (clock.monotonic() - start) / 3600, waited


def planned_hours(size: int, config: Config, prices: dict[str, int], fire: datetime
                  ) -> tuple[dict[str, int], float]:
    """(each credential's busiest planned rolling hour, minutes from the last planned
    fetch to the post)."""
    pool = _pool(size, config, prices, VirtualClock(datetime(2026, 7, 27, 1, 0, tzinfo=UTC)))
    plan = prefetch_plan(config, config.channels, fire - WINDOW, WINDOW, points=pool)
    spent: dict[str, list[tuple[datetime, int]]] = {}
    for item in plan:
        price = prices[item.repo]
        spent.setdefault(item.credential, []).append(
            (item.at, -(-price // 3) if item.counted else price))
    peaks = {}
    for name, moments in spent.items():
        moments.sort()
        peaks[name] = max(sum(p for t, p in moments if end - HOUR < t <= end)
                          for end, _ in moments)
    for member in pool.members:
        member.source.close()
    return peaks, (fire - max(p.at for p in plan)).total_seconds() / 60


def pool_rows(measured: Sequence[RepoPoints], week: str, tz: str) -> list[str]:
    names = [f"org/r{i}" for i in range(ORG_REPOS)]
    config = Config(repos={name: RepoConfig(timezone=tz) for name in names},
                    channels=tuple(ChannelConfig(platform="slack", id=f"C{i}", repo=name,
                                                 timezone=tz, schedule="0 9 * * MON")
                                   for i, name in enumerate(names)))
    prices = {name: measured[i % len(measured)].weekly for i, name in enumerate(names)}
    fetches = [(name, points) for i, name in enumerate(names)
               for points in (measured[i % len(measured)].weekly,
                              measured[i % len(measured)].before_counted)]
    total = sum(points for _, points in fetches)
    fire = week_period(week, tz).until + timedelta(hours=9)
    rows = [f"credential pools for {ORG_REPOS:,} repositories ({total:,} points of first-run "
            f"reads; personal tokens of {LIMIT:,} points an hour each):",
            f"{'pool':>6}  {'cold-cache minute: done after':>30}  {'refill waits':>12}  "
            f"{'plan: busiest hour per credential':>34}  {'last planned':>14}"]
    for size in POOLS:
        hours, waited = cold_minute(size, config, fetches, prices)
        peaks, early = planned_hours(size, config, prices, fire)
        worst = max(peaks.values())
        rows.append(f"{size:>6}  {hours:>28.2f} h  {waited:>12}  "
                    f"{worst:>9,} ({worst / LIMIT:.0%}; limit {SHARE:.0%})"
                    f"{'':>6}  {early:>6.0f} min before the post")
    return rows
