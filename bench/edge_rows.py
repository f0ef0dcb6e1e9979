"""The rows of `bench/faults.py` for what one hostile input or one address can do to
the whole service: a backtracking title pattern in the config while a merge webhook
and a digest run (the event loop must stay free: `/healthz` under 100 ms), and 600 slow,
reconnecting connections from one address while another asks for `/healthz` (at least
95% answered)."""

from __future__ import annotations

import asyncio
import math
import sys
import uuid
from pathlib import Path

from bench.fault_rows import Row
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.slow_clients import probes_during_flood
from testkit.reliability.slow_patterns import BACKTRACKING, WORST_TITLE, pattern_under_load

HEALTHZ_LIMIT_SECONDS = 0.1
FLOOD = 600
FLOOD_SECONDS = 20.0
ANSWERED_SHARE = 0.95


async def title_pattern_row(redis_url: str, workdir: Path) -> Row:
    """`exclude.titles = ['(a+)+$']` and a merged PR titled with its worst case."""
    row = Row(f"title pattern {BACKTRACKING} vs {len(WORST_TITLE)}-char title")
    outcome = await pattern_under_load(redis_url, workdir)
    row.events = 2 + len(outcome.probes)  # the webhook, the digest, the probes
    row.faults = 1
    row.expected = 1
    row.delivered = outcome.notified
    row.bad_5xx = outcome.probe_failures + (outcome.webhook_status >= 500)
    row.recover_s = outcome.webhook_seconds
    row.note = (f"webhook {outcome.webhook_seconds * 1000:.0f} ms, digest "
                f"{outcome.digest_seconds * 1000:.0f} ms, {len(outcome.probes)} /healthz "
                f"probes, slowest {outcome.slowest_probe * 1000:.1f} ms")
    if outcome.webhook_status != 200:
        row.problems.append(f"webhook answered {outcome.webhook_status}")
    if outcome.slowest_probe >= HEALTHZ_LIMIT_SECONDS:
        row.problems.append(f"/healthz took {outcome.slowest_probe * 1000:.0f} ms")
    return row


def one_address_flood_row(workdir: Path) -> Row:
    """600 slow, reconnecting connections from 127.0.0.2 against the default limits;
    `/healthz` asked from 127.0.0.3 every 0.2 s."""
    row = Row(f"{FLOOD} slow connections from one address (serve)")
    config = workdir / "prdigest.toml"
    config.write_text("[server]\nread_timeout_seconds = 5\n", encoding="utf-8")
    server = ServeProcess(config, {}, workdir / "serve.log").start(timeout=180)
    try:
        outcome = probes_during_flood(server.port, connections=FLOOD, seconds=FLOOD_SECONDS)
    finally:
        server.stop()
    row.events = outcome.flood.opened + outcome.probes
    row.faults = outcome.flood.opened
    row.expected = math.ceil(outcome.probes * ANSWERED_SHARE)  # the share it must answer
    row.delivered = outcome.answered
    row.recover_s = FLOOD_SECONDS
    row.note = (f"/healthz {outcome.answered}/{outcome.probes} answered "
                f"({outcome.share:.0%}); {outcome.flood.opened} connections opened, "
                f"{outcome.flood.refused} turned away")
    if outcome.share < ANSWERED_SHARE:
        row.problems.append(f"/healthz answered {outcome.share:.0%} of probes")
    return row


def edge_rows(redis_url: str, scratch: Path) -> list[Row]:
    """Both rows, each in a fresh folder under `scratch`."""
    rows = []
    for name, run in (("pattern", lambda w: asyncio.run(title_pattern_row(redis_url, w))),
                      ("flood", one_address_flood_row)):
        workdir = scratch / f"{name}-{uuid.uuid4().hex[:6]}"
        workdir.mkdir()
        rows.append(run(workdir))
        print(f"  {rows[-1].scenario}: done", file=sys.stderr)
    return rows
