"""Which weekly runs are due (`bot.delivery.due`): each channel's cron in its own time zone,
within the catch-up window."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot.config import ChannelConfig
from bot.delivery.due import due_runs
from testkit.schedule import (
    SHANGHAI_MONDAY_9,
    at,
    channel,
    make_config,
)

REDIS_TOPOLOGIES = ("single", "cluster")
"""Each Redis test here runs on one server and on a real Redis Cluster."""


# --- which runs are due ----------------------------------------------------------------


def configured(*channels: dict[str, Any]) -> tuple[ChannelConfig, ...]:
    return make_config(list(channels)).channels


def test_a_run_is_due_from_its_fire_time_in_the_channels_zone() -> None:
    channels = configured(channel("slack", "C1"))
    before = due_runs(channels, SHANGHAI_MONDAY_9 - timedelta(seconds=1), timedelta(hours=12))
    assert before == []
    runs = due_runs(channels, SHANGHAI_MONDAY_9, timedelta(hours=12))
    assert [(r.channel.key, r.week, r.fired_at) for r in runs] == [
        ("slack:C1", "2026-W29", SHANGHAI_MONDAY_9)]


def test_the_catch_up_window_bounds_what_is_still_due() -> None:
    channels = configured(channel("slack", "C1"))
    window = timedelta(hours=12)
    assert len(due_runs(channels, SHANGHAI_MONDAY_9 + window, window)) == 1
    assert due_runs(channels, SHANGHAI_MONDAY_9 + window + timedelta(seconds=1), window) == []


def test_three_zones_fire_at_their_own_nine_oclock() -> None:
    channels = configured(
        channel("slack", "SH", tz="Asia/Shanghai"),
        channel("slack", "BER", tz="Europe/Berlin"),
        channel("slack", "NY", tz="America/New_York"),
    )
    window = timedelta(hours=12)

    def due_at(moment: str) -> list[str]:
        return [r.channel.id for r in due_runs(channels, at(moment), window)]

    assert due_at("2026-07-20T01:00") == ["SH"]
    assert due_at("2026-07-20T07:00") == ["SH", "BER"]  # 09:00 CEST
    assert due_at("2026-07-20T13:01") == ["BER", "NY"]  # 09:00 EDT; Shanghai's 12 h are over
    # In winter New York is UTC-5: 09:00 is 14:00 UTC.
    assert "NY" not in due_at("2026-01-12T13:59")
    assert "NY" in due_at("2026-01-12T14:00")


def test_the_week_owed_is_the_previous_week_in_the_channels_zone() -> None:
    # Monday 08:00 in Auckland is still Sunday in UTC: the week owed is Auckland's.
    channels = configured(channel("telegram", "-1", tz="Pacific/Auckland",
                                  schedule="0 8 * * MON"))
    runs = due_runs(channels, at("2026-07-19T20:00"), timedelta(hours=1))
    assert [r.week for r in runs] == ["2026-W29"]


def test_daylight_saving_keeps_nine_oclock_local() -> None:
    channels = configured(channel("slack", "NY", tz="America/New_York"))
    window = timedelta(minutes=1)
    assert [r.week for r in due_runs(channels, at("2026-03-02T14:00"), window)] == ["2026-W09"]
    assert [r.week for r in due_runs(channels, at("2026-03-09T13:00"), window)] == ["2026-W10"]


def test_a_cron_firing_daily_owes_each_week_once() -> None:
    channels = configured(channel("slack", "C1", schedule="0 9 * * *"))
    # Tuesday 09:05: Monday's and Tuesday's fires both owe W29.
    tuesday = SHANGHAI_MONDAY_9 + timedelta(days=1, minutes=5)
    assert [r.week for r in due_runs(channels, tuesday, timedelta(hours=48))] == ["2026-W29"]
    # Monday 09:05: Sunday's fire owes W28, Monday's W29.
    monday = SHANGHAI_MONDAY_9 + timedelta(minutes=5)
    assert [r.week for r in due_runs(channels, monday, timedelta(hours=48))] == [
        "2026-W28", "2026-W29"]
