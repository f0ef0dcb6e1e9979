"""Which weekly posts are due: each channel's cron in its own time zone, and the week
each fire owes (the ISO week before the fire's, seen from the channel)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from croniter import croniter

from bot.config import ChannelConfig
from bot.store.ledger import Slot
from bot.week import shift_week, week_of, week_period, zone

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DueFailure:
    """A channel whose due posts could not be computed this pass, and why."""

    channel: ChannelConfig
    error: str


@dataclass(frozen=True)
class DueRun:
    """A channel whose cron fired within the catch-up window, and the week it owes."""

    channel: ChannelConfig
    week: str
    fired_at: datetime

    @property
    def slot(self) -> Slot:
        return Slot(self.week, self.channel.key, self.channel.scope)


def due_runs(
    channels: Iterable[ChannelConfig], now: datetime, catch_up: timedelta, *,
    failures: list[DueFailure] | None = None,
) -> list[DueRun]:
    """Every (channel, week) whose cron fired in [now - catch_up, now], oldest first.

    The week owed is the ISO week before the one the fire time falls in, seen from the
    channel's time zone. A cron firing several times in a week owes that week once.
    Channels sharing a schedule and a time zone share the computation. Each channel is
    computed on its own: one whose cron or zone cannot be read is left out (logged, and
    added to `failures`), and every other channel still gets its posts. A channel whose
    schedule is "off" owes nothing.
    """
    fires: dict[tuple[str, str], list[tuple[datetime, str]] | str] = {}
    runs: list[DueRun] = []
    for channel in channels:
        if not channel.weekly:
            continue
        key = (channel.schedule, channel.timezone)
        if key not in fires:
            try:
                fires[key] = _owed_weeks(channel.schedule, channel.timezone, now,
                                         now - catch_up)
            except Exception as exc:  # a cron croniter cannot walk, a zone gone
                fires[key] = f"{type(exc).__name__}: {exc}"[:300]
        owed = fires[key]
        if isinstance(owed, str):
            log.error("schedule: %s skipped this pass: schedule %r in %s: %s", channel.key,
                      channel.schedule, channel.timezone, owed)
            if failures is not None:
                failures.append(DueFailure(channel, owed))
            continue
        runs.extend(DueRun(channel, week, fired) for fired, week in owed)
    return sorted(runs, key=lambda run: (run.fired_at, run.channel.key, run.channel.scope))


def _owed_weeks(schedule: str, tz_name: str, now: datetime, earliest: datetime
                ) -> list[tuple[datetime, str]]:
    """(latest fire time, week owed) for each week owed by fires in [earliest, now]."""
    tz = zone(tz_name)
    # croniter's get_prev excludes its start, so start just after `now`.
    start = now.astimezone(tz) + timedelta(microseconds=1)
    owed: list[tuple[datetime, str]] = []
    while True:
        fired: datetime = croniter(schedule, start).get_prev(datetime)
        if fired < earliest:
            return owed
        fired_week = week_of(fired, tz_name)
        owed.append((fired, shift_week(fired_week, -1)))
        # Jump to the start of the fire's week: earlier fires of it owe the same week.
        start = week_period(fired_week, tz_name).since
