"""`prdigest serve` SIGKILLed mid-post and restarted: no weekly post lost or doubled.

One run parks four posts at once - Telegram's before Telegram sees it, Feishu's and
two Slack channels' after the platform took them (one channel's digest is of one
repository, the other's of two: `repos = [...]`) - kills the process, and restarts
it. The restarted process finds the slots in doubt (its ledger says `sending`):
Telegram's is re-sent, each Slack one is found in its channel by its metadata and
recorded, and Feishu drops its re-sent card by `uuid`. Every other combination,
including the window no client can close (Telegram took the message, the process
died before hearing so), runs in `bench/faults.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.reliability.kill import describe, kill_mid_post
from testkit.reliability.names import SECRETS

pytestmark = [pytest.mark.kills, pytest.mark.redis]  # processes (or Redis) killed and restarted


def test_killed_mid_post_and_restarted_every_channel_gets_its_digest_once(
    redis_url: str, tmp_path: Path
) -> None:
    outcome = kill_mid_post({"slack": "after", "telegram": "before", "feishu": "after",
                             "multi": "after"}, redis_url, tmp_path)
    assert outcome.ledger == {"slack": "posted", "telegram": "posted", "feishu": "posted",
                              "vault": "posted", "multi": "posted"}
    assert outcome.exactly_once, describe(outcome)
    # Recovered by the restart's own passes (5 s locks, 1 s polls), not by waiting out
    # anything; its start-up, however slow the machine, is not counted.
    assert outcome.recover_seconds - outcome.start_seconds < 30
    log = (tmp_path / "serve.log").read_text(errors="replace")
    assert "left in doubt" in log  # the restart really found the killed posts
    assert "had arrived; recorded, not sent again" in log  # Slack's, by its metadata
    # The operator's log of two runs, a kill and a restart holds no secret.
    assert [name for name, value in SECRETS.items() if value in log] == []
