"""A weekly-schedule pass that left a channel out shows in `/healthz` (degraded, the
count and the last error) and in `/metrics`, while every other channel is posted."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from testkit.reliability.harness import Service
from testkit.reliability.names import TELEGRAM_CHAT
from testkit.schedule import tick_at

MONDAY = datetime(2026, 7, 20, 1, 5, tzinfo=UTC)  # every channel's W29 post is due


async def test_a_channel_left_out_of_a_pass_degrades_healthz_and_counts(
        service: Service) -> None:
    scheduler = service.services.process.scheduler
    assert scheduler is not None
    healthy = (await service.get("/healthz")).json()
    assert healthy["status"] == "ok" and healthy["scheduler"]["failed_passes"] == 0
    channels = tuple(msgspec.structs.replace(c, schedule="0 9 30 2 *")
                     if c.id == TELEGRAM_CHAT else c for c in scheduler.config.channels)
    scheduler.config = msgspec.structs.replace(scheduler.config, channels=channels)

    results = await tick_at(scheduler, MONDAY)
    assert {r.channel for r in results if r.status == "posted"} == {
        c.key for c in channels if c.id != TELEGRAM_CHAT}

    health = (await service.get("/healthz")).json()
    assert health["status"] == "degraded"
    assert health["scheduler"]["failed_passes"] == 1
    assert f"telegram:{TELEGRAM_CHAT}" in health["scheduler"]["last_error"]
    metrics = (await service.get("/metrics")).text
    assert 'prdigest_schedule_failures_total{kind="channel"} 1.0' in metrics
