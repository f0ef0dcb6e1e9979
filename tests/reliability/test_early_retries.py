"""`prdigest serve` SIGKILLed after acknowledging 30 questions (ten per platform) and
taking a merged-PR notice; the platforms retry on another replica at +1 s, +5 s and
+12 s, each delivery until it is acknowledged. While the dead process's alive mark
stands, the tries are refused for later (never acknowledged as repeats, which would
end the retries with nothing answered); then every question is answered once and the
notice posted once."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.reliability.crash_after_ack import PER_PLATFORM
from testkit.reliability.early_retries import RETRY_AT, early_retries

pytestmark = [pytest.mark.kills, pytest.mark.redis]  # processes (or Redis) killed and restarted

DELIVERIES = 3 * PER_PLATFORM + 1


def test_retries_while_a_dead_owner_looks_alive_are_answered_once_later(
        redis_url: str, tmp_path: Path) -> None:
    outcome = early_retries(redis_url, tmp_path)
    assert outcome.parked == DELIVERIES  # all of it was in flight at the kill
    assert outcome.answers == {name: [1] * PER_PLATFORM
                               for name in ("slack", "telegram", "feishu")}, outcome
    assert outcome.notices == 1
    assert outcome.unacknowledged == 0
    first, *_, last = RETRY_AT
    assert outcome.rounds[first] == {503: DELIVERIES}, outcome.rounds  # "send it later"
    assert sum(outcome.rounds[last].values()) <= DELIVERIES
    assert set(outcome.rounds[last]) <= {200}, outcome.rounds
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.glob("*.log"))
    assert "taken over" in logs
    assert "Traceback" not in logs
