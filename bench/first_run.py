"""An organisation's first weekly run against one token: each repository's week, and
the week before for the trends, fetched at the moments the prefetch plan gives them in
the window before a Monday 09:00 post, each at the points measured for a seeded
repository; the most spent in any hour is set against what a personal token and a
GitHub App installation get per hour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from bot.config import ChannelConfig, Config, RepoConfig
from bot.delivery.prefetch import Prefetch, prefetch_plan
from bot.week import week_period
from testkit.fakes.github_points import LIMIT

APP_LIMIT = 12_500
"""Points per hour of a GitHub App installation at most (5,000, plus 50 per repository
beyond 20 and 50 per organisation member beyond 20; 10,000 on Enterprise Cloud)."""
ORG_REPOS = 2000
WINDOW = timedelta(hours=6)
"""`server.prefetch_hours`' default."""


@dataclass
class RepoPoints:
    """What one repository's reads cost: the week in full, the week before in full (a
    first run before the counted read) and for its counts only (a first run now)."""

    weekly: int
    before_full: int
    before_counted: int


def _peak_hour(spent: Sequence[tuple[float, int]]) -> int:
    """The most points spent within any hour of (seconds, points) moments."""
    ordered = sorted(spent)
    peak = total = start = 0
    for moment, points in ordered:
        total += points
        while ordered[start][0] <= moment - 3600:
            total -= ordered[start][1]
            start += 1
        peak = max(peak, total)
    return peak


def _on_one_token(spent: Sequence[tuple[float, int]], limit: int) -> tuple[float, int]:
    """The fetches on a token of `limit` points an hour, as the prefetch runs them: each
    at its moment, or - short of points, as `Budget.short_of` tells - at the next
    refill (GitHub's hour starts at the first request). When the last one is done, and
    how many waited for a refill."""
    clock = window = -1.0
    used = waited = 0
    for moment, points in sorted(spent):
        clock = max(clock, moment)
        if window < 0 or clock >= window + 3600:
            window, used = clock, 0
        if used + points > limit:
            clock = window = window + 3600
            used, waited = 0, waited + 1
        used += points
    return clock, waited


def _spent(plan: Sequence[Prefetch], measured: Sequence[RepoPoints], *, counted: bool
           ) -> list[tuple[float, int]]:
    out = []
    for item in plan:
        m = measured[int(item.repo.rsplit("r", 1)[1]) % len(measured)]
        points = m.weekly if not item.counted else (
            m.before_counted if counted else m.before_full)
        out.append((item.at.timestamp(), points))
    return out


def first_run_rows(measured: Sequence[RepoPoints], repos: int, week: str, tz: str
                   ) -> list[str]:
    """The first run of `repos` repositories, one channel each, the week after `week`."""
    names = [f"org/r{i}" for i in range(repos)]
    config = Config(repos={name: RepoConfig(timezone=tz) for name in names},
                    channels=tuple(ChannelConfig(platform="slack", id=f"C{i}", repo=name,
                                                 timezone=tz, schedule="0 9 * * MON")
                                   for i, name in enumerate(names)))
    fire = week_period(week, tz).until + timedelta(hours=9)
    plan = prefetch_plan(config, config.channels, fire - WINDOW, WINDOW)
    first, last = min(p.at for p in plan), max(p.at for p in plan)
    rows = [f"first run of {repos} repositories (a channel each, Monday 09:00 {tz}; the "
            f"{WINDOW.seconds // 3600}-hour prefetch window spreads {len(plan)} fetches over "
            f"{(last - first).total_seconds() / 3600:.1f} h):"]
    for label, counted in (("week before for its counts", True),
                           ("week before in full", False)):
        spent = _spent(plan, measured, counted=counted)
        total = sum(p for _, p in spent)
        rows.append(f"  {label}: {total:,} points in all (6 token-hours of a personal token: "
                    f"{LIMIT * 6:,}), at most {_peak_hour(spent):,} in any hour as hashed "
                    "(before the plan paces it: below)")
        for name, limit in (("personal token", LIMIT), ("App installation", APP_LIMIT)):
            done, waited = _on_one_token(spent, limit)
            early = (fire.timestamp() - done) / 60
            rows.append(f"    on one {name} ({limit:,}/h): {waited} fetch(es) wait for a "
                        f"refill; the last done {early:.0f} min before the post"
                        if early >= 0 else
                        f"    on one {name} ({limit:,}/h): {waited} fetch(es) wait for a "
                        f"refill; the last done {-early:.0f} min AFTER the post: late")
    return rows
