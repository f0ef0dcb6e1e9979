"""Batched and threaded merged-PR notices, exactly once per PR and channel, on Slack,
Telegram and Feishu, while `prdigest serve` replicas are SIGKILLed under them (see
`testkit.reliability.notice_kills` for the runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.reliability.notice_kills import (
    PLATFORMS,
    batched_under_kills,
    describe,
    listings,
    threaded_under_kills,
)

pytestmark = [pytest.mark.kills, pytest.mark.redis]  # processes (or Redis) killed and restarted


def test_a_burst_batched_across_killed_replicas_lists_every_pr_once(
        redis_url: str, tmp_path: Path) -> None:
    outcome = batched_under_kills(redis_url, tmp_path)
    assert outcome.in_flight_status is None  # the victim died handling that delivery
    assert set(outcome.redelivered.values()) == {200}, outcome.redelivered
    assert set(outcome.repeated) == {200}, outcome.repeated
    assert outcome.killed_mid_batch  # some replica died holding each batch post
    # While its holder lived, no other replica sent a batch (Feishu had the parked one).
    assert outcome.stalled == {"slack": 0, "telegram": 0, "feishu": 1}, outcome.stalled
    for platform in PLATFORMS:
        messages = outcome.messages[platform]
        # One message for the whole burst (it fits in the window), each PR once.
        assert len(messages) == 1, describe(outcome.messages)
        assert listings(messages, outcome.numbers) == dict.fromkeys(outcome.numbers, 1)
        assert messages[0].parent is None
    # The full config's channel that follows npu without batching: one notice per PR.
    assert outcome.plain_notices == dict.fromkeys(outcome.numbers, 1)
    assert outcome.open_batches == 0  # nothing left to send (again)
    # The batch Feishu took from the killed replica was sent again, and dropped by uuid.
    assert outcome.feishu_copies == dict.fromkeys(outcome.numbers, 2)
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("serve-*.log"))
    assert "taken over" in logs  # a restarted or surviving replica took a dead one's claim
    assert "Traceback" not in logs


def test_threaded_notices_go_under_the_recorded_digest_once_across_kills(
        redis_url: str, tmp_path: Path) -> None:
    outcome = threaded_under_kills(redis_url, tmp_path)
    assert outcome.killed_mid_digest
    assert outcome.digests == dict.fromkeys(PLATFORMS, (1, 0, 0)), outcome.digests
    for platform in PLATFORMS:
        notices = outcome.notices(platform)
        assert listings(notices, outcome.numbers) == dict.fromkeys(outcome.numbers, 1), \
            describe(outcome.messages)
        assert {m.parent for m in notices} == {outcome.parents[platform]}, \
            (outcome.parents, describe(outcome.messages))
    # The notice Feishu took from the killed replica was sent again, and dropped by uuid.
    assert outcome.feishu_copies == {n: 1 + (n == outcome.in_doubt) for n in outcome.numbers}
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("serve-*.log"))
    assert "had arrived; recorded, not sent again" in logs  # Slack's digest, by metadata
    assert "Traceback" not in logs
