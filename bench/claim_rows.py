"""Rows of `bench/faults.py` for claims under faults: a Redis blip in the middle of a
merged-PR notice, then the redelivery; and `prdigest serve` SIGKILLed after
acknowledging, with the platforms retrying at +1 s, +5 s and +12 s."""

from __future__ import annotations

from pathlib import Path

import redis

from bench.fault_rows import Row, in_flight_row
from testkit.notice_blips import EVERY_CHANNEL, notice_blip
from testkit.reliability.early_retries import RETRY_AT, early_retries
from testkit.server_support import webhook_service

BLIP_STEPS = {0: "before the first post", 1: "after the first post"}


async def notice_blip_row(redis_url: str) -> Row:
    """A merge every channel follows; Redis goes away mid-notice (before, then after
    the first channel's post), comes back, and GitHub redelivers it twice. The 503 of
    the delivery during the blip is the one asked for ("redeliver later")."""
    row = Row("Redis blip mid-notice, then redelivery (x2 steps)")
    answers: list[str] = []
    for passing in BLIP_STEPS:
        redis.Redis.from_url(redis_url).flushall()  # each step on its own
        with webhook_service(redis_url) as (app, adapters):
            blip = await notice_blip(app, adapters, passing=passing)
        row.events += 3
        row.faults += 1
        row.expected += len(EVERY_CHANNEL)
        for platform, channel, number in EVERY_CHANNEL:
            count = blip.posted.count((platform, channel, number))
            row.delivered += min(count, 1)
            row.duplicated += max(count - 1, 0)
            row.lost += count == 0
        statuses = [blip.during.status_code, blip.again.status_code, blip.last.status_code]
        row.bad_5xx += sum(s >= 500 for s in statuses[1:]) + (statuses[0] not in (503, 200))
        answers.append(f"{BLIP_STEPS[passing]}: {'/'.join(map(str, statuses))}, "
                       f"{blip.refused} Redis commands refused")
        if "retry-after" not in blip.during.headers:
            row.problems.append("the delivery during the blip asked for no redelivery")
    row.note = "; ".join(answers)
    return row


def early_retries_row(redis_url: str, workdir: Path) -> Row:
    """30 acknowledged questions and a notice SIGKILLed in flight (real alive marks of
    10 s); another replica gets each delivery at +1/+5/+12 s until acknowledged."""
    outcome = early_retries(redis_url, workdir)
    row = in_flight_row("serve SIGKILL, retries at +1/+5/+12 s: 30 q + notice", outcome)
    row.note = "; ".join(
        f"+{at:g} s: " + ", ".join(f"{count}x{status}" for status, count
                                   in sorted(outcome.rounds.get(at, {}).items()))
        for at in RETRY_AT) + f"; {outcome.unacknowledged} never acknowledged"
    if outcome.unacknowledged:
        row.problems.append(f"{outcome.unacknowledged} deliveries never acknowledged")
    return row
