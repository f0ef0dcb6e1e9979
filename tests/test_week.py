"""ISO weeks are Monday 00:00 to Monday 00:00 in the repository's time zone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.errors import WeekError
from bot.week import parse_week, past_week, resolve_week, shift_week, week_of, week_period


def test_period_is_local_monday_to_monday() -> None:
    period = week_period("2026-W29", "Asia/Shanghai")
    assert period.since.isoformat() == "2026-07-13T00:00:00+08:00"
    assert period.until.isoformat() == "2026-07-20T00:00:00+08:00"


def test_the_same_moment_falls_in_different_weeks_by_zone() -> None:
    merged = datetime(2026, 7, 19, 16, 40, tzinfo=UTC)
    assert week_of(merged, "Asia/Shanghai") == "2026-W30"
    assert week_of(merged, "UTC") == "2026-W29"


@pytest.mark.parametrize("text", ["2026-W60", "2026-W00", "2025-W53", "2026-29", "W29", "", "x"])
def test_malformed_weeks_are_rejected(text: str) -> None:
    with pytest.raises(WeekError):
        parse_week(text)


def test_years_with_53_weeks() -> None:
    assert parse_week("2026-W53") == (2026, 53)


def test_shift_across_the_year_boundary() -> None:
    assert shift_week("2027-W01", -1) == "2026-W53"
    assert shift_week("2026-W53", 1) == "2027-W01"


def test_relative_weeks() -> None:
    now = datetime(2026, 7, 22, 12, tzinfo=UTC)
    assert resolve_week("last", now) == "2026-W29"
    assert resolve_week("this", now) == "2026-W30"
    assert resolve_week("2026-w5", now) == "2026-W05"


@pytest.mark.parametrize("text", ["0000-W01", "0000W53", "0001-W01", "9999-W52", "9999-W01"])
def test_a_week_the_calendar_cannot_hold_is_a_week_error(text: str) -> None:
    # `date(0, 12, 28)` and the Monday after 9999-W52 are out of range: a WeekError
    # (a 404, the CLI's exit 2), never a ValueError or an OverflowError.
    with pytest.raises(WeekError):
        parse_week(text)
    with pytest.raises(WeekError):
        past_week(text, datetime(2026, 7, 22, tzinfo=UTC))

