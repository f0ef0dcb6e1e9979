"""`prdigest serve` SIGKILLed after acknowledging 30 questions (ten per platform) and a
merged-PR notice, before any answer reached its platform; restarted and sent the same
requests again: every question is answered once, the notice posted once."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.reliability.crash_after_ack import PER_PLATFORM, crash_after_ack

pytestmark = [pytest.mark.kills, pytest.mark.redis]  # processes (or Redis) killed and restarted


def test_acknowledged_work_killed_in_flight_is_answered_once_after_redelivery(
        redis_url: str, tmp_path: Path) -> None:
    outcome = crash_after_ack(redis_url, tmp_path)
    assert outcome.parked == 3 * PER_PLATFORM + 1  # all of it was in flight at the kill
    assert outcome.answers == {name: [1] * PER_PLATFORM
                               for name in ("slack", "telegram", "feishu")}, outcome
    assert outcome.notices == 1
    assert outcome.answered_once
    log = (tmp_path / "serve.log").read_text(errors="replace")
    assert "taken over" in log  # the restarted process took the dead one's claims
    assert "Traceback" not in log
