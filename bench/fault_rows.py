"""One row of `bench/faults.py`, and the rows for the hardening scenarios: hostile
uploads (peak RSS of `prdigest serve`), slow clients (its open descriptors), a cron
that never fires, and acknowledged work SIGKILLed in flight then re-delivered."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import httpx
import msgspec

from bot.errors import ConfigError
from testkit.reliability.crash_after_ack import PER_PLATFORM, crash_after_ack
from testkit.reliability.harness import service_in_process
from testkit.reliability.names import TELEGRAM_CHAT
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.slow_clients import slow_clients
from testkit.reliability.uploads import hostile_uploads
from testkit.reliability.world import world, write_config
from testkit.schedule import tick_at

MONDAY = datetime(2026, 7, 20, 1, 5, tzinfo=UTC)  # every channel's W29 post is due
NEVER = "0 9 30 2 *"
UPLOAD_GROWTH_LIMIT_MIB = 40.0
SLOW_CLIENTS = 3000
SLOW_LIMIT = 200
SLOW_TIMEOUT_S = 3.0


@dataclass
class Row:
    scenario: str
    events: int = 0
    faults: int = 0
    expected: int = 0
    delivered: int = 0
    duplicated: int = 0
    lost: int = 0
    bad_5xx: int = 0
    live: int = 0
    recover_s: float | None = None
    problems: list[str] = field(default_factory=list)
    note: str = ""
    # A known limit the row documents rather than a failure (e.g. Telegram has no
    # idempotency key); it is printed, and does not fail the run.
    allowed_duplicates: int = 0

    @property
    def ok(self) -> bool:
        return (not self.problems and self.lost == 0 and self.bad_5xx == 0
                and self.live == 0 and self.duplicated <= self.allowed_duplicates
                and self.delivered >= self.expected)


def hostile_uploads_row(redis_url: str, workdir: Path) -> Row:
    """8 parallel unsigned 48 MiB uploads (declared and chunked) to `prdigest serve`."""
    row = Row("8 parallel 48 MiB unsigned uploads (serve)")
    with world() as fakes:
        config = workdir / "prdigest.toml"
        write_config(config, fakes.urls())
        server = ServeProcess(config, fakes.env(redis_url), workdir / "serve.log").start()
        try:
            assert server.process is not None
            outcome = hostile_uploads(server.process.pid, server.port)
            healthy = httpx.get(f"{server.url}/healthz", timeout=5).status_code
        finally:
            server.stop()
    row.events = row.faults = len(outcome.statuses)
    row.bad_5xx = sum(s.startswith("5") for s in outcome.statuses)
    row.recover_s = outcome.seconds
    row.note = (f"peak RSS {outcome.peak_kib / 1024:.0f} MiB, +{outcome.growth_mib:.1f} MiB "
                f"over {outcome.baseline_kib / 1024:.0f} MiB; "
                f"{outcome.sent_bytes / 2**20:.0f} of {8 * 48} MiB taken before refusing")
    if outcome.growth_mib >= UPLOAD_GROWTH_LIMIT_MIB:
        row.problems.append(f"RSS grew {outcome.growth_mib:.0f} MiB")
    if not set(outcome.statuses) <= {"413", "closed"}:
        row.problems.append(f"answers {outcome.statuses}")
    if healthy != 200:
        row.problems.append(f"/healthz {healthy} afterwards")
    return row


def slow_clients_row(workdir: Path) -> Row:
    """3,000 connections that send half a request head and then nothing (slowloris)."""
    row = Row(f"{SLOW_CLIENTS} slow connections (serve, limit {SLOW_LIMIT})")
    config = workdir / "prdigest.toml"
    config.write_text(f"[server]\nmax_connections = {SLOW_LIMIT}\n"
                      f"read_timeout_seconds = {SLOW_TIMEOUT_S}\n", encoding="utf-8")
    server = ServeProcess(config, {}, workdir / "serve.log").start()
    try:
        assert server.process is not None
        outcome = slow_clients(server.process.pid, server.port, connections=SLOW_CLIENTS,
                               wait=SLOW_TIMEOUT_S + 5)
        healthy = httpx.get(f"{server.url}/healthz", timeout=5).status_code
    finally:
        server.stop()
    row.events = row.faults = outcome.connections
    row.recover_s = outcome.seconds
    row.note = (f"fds {outcome.baseline_fds} -> peak {outcome.peak_fds} -> "
                f"{outcome.final_fds}; {outcome.refused} refused at once, "
                f"{outcome.closed_in_time} closed in {outcome.seconds:.1f} s")
    if outcome.held > SLOW_LIMIT + 20:
        row.problems.append(f"{outcome.held} descriptors held")
    if outcome.closed_in_time < outcome.connections:
        row.problems.append(f"{outcome.connections - outcome.closed_in_time} never closed")
    if healthy != 200:
        row.problems.append(f"/healthz {healthy} afterwards")
    return row


async def never_firing_cron_row(redis_url: str, workdir: Path) -> Row:
    """`0 9 30 2 *` is refused at load; one that got past it stops no other channel."""
    row = Row(f"never-firing cron ({NEVER})")
    with world() as fakes:
        try:
            write_config(workdir / "never.toml", fakes.urls(), schedule=NEVER)
            row.problems.append("config with a never-firing cron was accepted")
        except ConfigError as exc:
            if "schedule" not in str(exc):
                row.problems.append(f"error does not name the field: {exc}")
        async with service_in_process(fakes, redis_url, workdir) as service:
            scheduler = service.services.process.scheduler
            assert scheduler is not None
            channels = tuple(msgspec.structs.replace(c, schedule=NEVER)
                             if c.id == TELEGRAM_CHAT else c
                             for c in scheduler.config.channels)
            scheduler.config = msgspec.structs.replace(scheduler.config, channels=channels)
            results = await tick_at(scheduler, MONDAY)
            health = (await service.get("/healthz")).json()
    row.events = row.expected = len(channels) - 1
    row.faults = 1
    row.delivered = sum(r.status == "posted" for r in results)
    row.lost = row.expected - row.delivered
    if health["status"] != "degraded" or health["scheduler"]["failed_passes"] != 1:
        row.problems.append(f"/healthz did not report it: {health['status']}, "
                            f"{health['scheduler'].get('failed_passes')} failed passes")
    row.note = f"/healthz {health['status']}: {health['scheduler']['last_error'][:60]}"
    return row


class InFlightOutcome(Protocol):
    """What a run that SIGKILLs acknowledged work in flight measured."""

    @property
    def parked(self) -> int: ...

    @property
    def recover_seconds(self) -> float: ...

    @property
    def lost(self) -> int: ...

    @property
    def duplicated(self) -> int: ...


def crash_after_ack_row(redis_url: str, workdir: Path) -> Row:
    """30 acknowledged questions and a notice SIGKILLed in flight, then re-delivered."""
    return in_flight_row("serve SIGKILL after ack: 30 questions + notice",
                         crash_after_ack(redis_url, workdir))


def in_flight_row(scenario: str, outcome: InFlightOutcome) -> Row:
    """The row of 30 questions and a notice SIGKILLed in flight."""
    row = Row(scenario)
    row.events = 3 * PER_PLATFORM + 1
    row.faults = 1 + outcome.parked
    row.expected = row.events
    row.lost = outcome.lost
    row.duplicated = outcome.duplicated
    row.delivered = row.events - row.lost
    row.recover_s = outcome.recover_seconds
    return row
