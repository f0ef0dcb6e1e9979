"""A Redis blip in the middle of a merged-PR notice costs no notice: the delivery is
answered 503, the claims Redis could not be told of are written once it is back, and
GitHub's redelivery then announces the merge to every channel, once each."""

from __future__ import annotations

from typing import Any, cast

import pytest
import redis.asyncio as aioredis

from testkit.flaky_redis import FlakyRedis
from testkit.server_support import (
    FEISHU,
    SLACK,
    TELEGRAM,
    RecordingAdapter,
    merged_event,
    notices,
    services_of,
    serving,
    snapshot_pull,
    webhook_request,
)

MERGE = 1212  # touches trainer, npu and checkpoint: every example channel follows one
EVERY_CHANNEL = [("feishu", "oc_0123456789abcdef", MERGE), ("slack", "C0123456", MERGE),
                 ("telegram", "-1001234567890", MERGE)]


@pytest.mark.parametrize("passing", [0, 1], ids=["before-the-first-post",
                                                 "after-the-first-post"])
async def test_a_notice_redelivered_after_a_redis_blip_is_announced_once(
        webhook_app: tuple[Any, dict[str, RecordingAdapter]], passing: int) -> None:
    """Redis goes away at the first claim of a channel's notice (before anything was
    posted), or just after the first channel's notice was posted; writing the outcome
    fails, and so does releasing the merge."""
    app, adapters = webhook_app
    claims = services_of(app).claims
    assert claims.client is not None
    flaky = FlakyRedis(claims.client, down_on="notice:", passing=passing)
    claims.client = cast(aioredis.Redis, flaky)
    body, headers = webhook_request(merged_event(snapshot_pull(MERGE)), delivery="d-blip")
    async with serving(app) as http:
        first = await http.post("/github/webhook", content=body, headers=headers)
        posted_during = notices(adapters)
        flaky.down = False  # Redis is back; GitHub's "redeliver"
        again = await http.post("/github/webhook", content=body, headers=headers)
        last = await http.post("/github/webhook", content=body, headers=headers)
    assert flaky.refused, "the blip never happened"
    assert first.status_code == 503
    assert len(posted_during) == passing
    assert again.status_code == 200 and "notified" in again.json(), again.text
    assert sorted(again.json()["notified"]) == sorted({SLACK, TELEGRAM, FEISHU} - {
        f"{platform}:{channel}" for platform, channel, _ in posted_during})
    assert last.json() == {"duplicate": True}
    assert notices(adapters) == EVERY_CHANNEL  # each channel once, none lost
    assert int(first.headers["retry-after"]) > 0
