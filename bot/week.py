"""ISO weeks in a repository's or channel's time zone (Monday 00:00 to Monday 00:00)."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.errors import FutureWeekError, WeekError
from bot.models import Period, PullRequest

DEFAULT_TIMEZONE = "Asia/Shanghai"
FIRST_YEAR = 2008
"""GitHub opened in 2008; a week before that has no PRs to show."""
MIN_YEAR, MAX_YEAR = 2, 9998
"""Years whose weeks, and the weeks either side of them, the calendar can hold
(`date` spans years 1 to 9999)."""
_WEEK = re.compile(r"^(\d{4})-?[Ww](\d{1,2})$")


def zone(name: str) -> ZoneInfo:
    """A ZoneInfo, or a `WeekError` naming the unknown zone."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise WeekError(f"unknown time zone {name!r}") from None


def parse_week(text: str) -> tuple[int, int]:
    """(year, week) from `2026-W29`; weeks that the year does not have are rejected."""
    match = _WEEK.match(text.strip())
    if not match:
        raise WeekError(f"week {text!r}: expected an ISO week such as 2026-W29")
    year, week = int(match[1]), int(match[2])
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise WeekError(f"week {text!r}: the year must be between {MIN_YEAR} and {MAX_YEAR}")
    weeks_in_year = date(year, 12, 28).isocalendar().week
    if not 1 <= week <= weeks_in_year:
        raise WeekError(f"week {text!r}: {year} has weeks 1 to {weeks_in_year}")
    return year, week


def format_week(year: int, week: int) -> str:
    return f"{year}-W{week:02d}"


def week_period(text: str, tz: str = DEFAULT_TIMEZONE) -> Period:
    """The half-open interval [Monday 00:00, next Monday 00:00) in `tz`."""
    year, week = parse_week(text)
    monday = date.fromisocalendar(year, week, 1)
    since = datetime.combine(monday, datetime.min.time(), zone(tz))
    until = datetime.combine(monday + timedelta(days=7), datetime.min.time(), zone(tz))
    return Period(since=since, until=until)


def week_of(moment: datetime, tz: str = DEFAULT_TIMEZONE) -> str:
    """The ISO week a moment falls in, seen from `tz`."""
    iso = moment.astimezone(zone(tz)).isocalendar()
    return format_week(iso.year, iso.week)


def shift_week(text: str, weeks: int) -> str:
    """The week `weeks` before (negative) or after (positive) `text`."""
    year, week = parse_week(text)
    monday = date.fromisocalendar(year, week, 1) + timedelta(weeks=weeks)
    iso = monday.isocalendar()
    return format_week(iso.year, iso.week)


def current_week(now: datetime, tz: str = DEFAULT_TIMEZONE) -> str:
    return week_of(now, tz)


def resolve_week(text: str, now: datetime, tz: str = DEFAULT_TIMEZONE) -> str:
    """Accept `2026-W29`, `last` / `previous`, `this` / `current`; normalise the form."""
    word = text.strip().lower()
    if word in {"last", "previous", "prev"}:
        return shift_week(current_week(now, tz), -1)
    if word in {"this", "current", "now"}:
        return current_week(now, tz)
    year, week = parse_week(text)
    return format_week(year, week)


def past_week(text: str, now: datetime, tz: str = DEFAULT_TIMEZONE) -> str:
    """The week in canonical form when it can have PRs: it has started (seen from `tz`)
    and is not before `FIRST_YEAR`. `FutureWeekError` for a week still to come,
    `WeekError` for anything else; what every entry point asks before building."""
    year, number = parse_week(text)
    week = format_week(year, number)
    current = current_week(now, tz)
    if (year, number) > parse_week(current):
        raise FutureWeekError(f"week {week} has not started yet (this week is {current})",
                              week=week, current=current)
    if year < FIRST_YEAR:
        raise WeekError(f"week {week}: there are no PRs before {FIRST_YEAR}")
    return week


def in_period(moment: datetime | None, period: Period) -> bool:
    return moment is not None and period.since <= moment < period.until


def belongs_to_week(pull: PullRequest, period: Period) -> str | None:
    """How a PR counts in the week: 'merged', 'closed', 'opened', or None.

    A PR belongs to the week it was merged or closed in; one opened in the week and
    still open counts as opened.
    """
    if pull.state == "merged" and in_period(pull.merged_at or pull.closed_at, period):
        return "merged"
    if pull.state == "closed" and in_period(pull.closed_at, period):
        return "closed"
    if pull.state == "open" and in_period(pull.created_at, period):
        return "opened"
    return None
