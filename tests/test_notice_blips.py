"""A Redis blip in the middle of a merged-PR notice costs no notice: the delivery is
answered 503, the claims Redis could not be told of are written once it is back, and
GitHub's redelivery then announces the merge to every channel, once each."""

from __future__ import annotations

import pytest

from testkit.notice_blips import EVERY_CHANNEL, notice_blip
from testkit.server_support import FEISHU, SLACK, TELEGRAM, webhook_service


@pytest.mark.parametrize("passing", [0, 1], ids=["before-the-first-post",
                                                 "after-the-first-post"])
async def test_a_notice_redelivered_after_a_redis_blip_is_announced_once(
        redis_url: str, passing: int) -> None:
    """Redis goes away at the first claim of a channel's notice (before anything was
    posted), or just after the first channel's notice was posted; writing the outcome
    fails, and so does releasing the merge."""
    with webhook_service(redis_url) as (app, adapters):
        blip = await notice_blip(app, adapters, passing=passing)
    assert blip.refused, "the blip never happened"
    assert blip.during.status_code == 503
    assert len(blip.posted_during) == passing
    assert blip.again.status_code == 200 and "notified" in blip.again.json(), blip.again.text
    assert sorted(blip.again.json()["notified"]) == sorted({SLACK, TELEGRAM, FEISHU} - {
        f"{platform}:{channel}" for platform, channel, _ in blip.posted_during})
    assert blip.last.json() == {"duplicate": True}
    assert blip.posted == EVERY_CHANNEL  # each channel once, none lost
    assert int(blip.during.headers["retry-after"]) > 0
