"""A Redis blip in the middle of a merged-PR notice, then GitHub's redelivery.

`notice_blip` sends the signed delivery of a merge every example channel follows to the
service in-process; Redis (through `FlakyPort` under the service's claims) goes away
at the first claim of a channel's notice (`passing=0`: before anything was posted) or
just after the first channel's notice was posted (`passing=1`), so writing that outcome
and releasing the merge fail too. Redis comes back, the same delivery is sent twice
more, and what each answer said and which notices arrived are returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette

from testkit.coordination import FlakyPort
from testkit.server_support import (
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


@dataclass(frozen=True)
class Blip:
    """The answers to the delivery during the blip, to the redelivery after it and to
    one more; the notices posted during the blip and in all; the Redis commands
    refused."""

    during: httpx.Response
    again: httpx.Response
    last: httpx.Response
    posted_during: list[tuple[str, str, int]]
    posted: list[tuple[str, str, int]]
    refused: int


async def notice_blip(app: Starlette, adapters: dict[str, Any], *, passing: int) -> Blip:
    """One blip at the chosen step, then the redelivery and one more."""
    claims = services_of(app).process.claims
    flaky = FlakyPort(claims.port, down_on="notice:", passing=passing)
    claims.store = flaky.claims
    body, headers = webhook_request(merged_event(snapshot_pull(MERGE)), delivery="d-blip")
    async with serving(app) as http:
        during = await http.post("/github/webhook", content=body, headers=headers)
        posted_during = notices(adapters)
        flaky.down = False  # Redis is back; GitHub's "redeliver"
        again = await http.post("/github/webhook", content=body, headers=headers)
        last = await http.post("/github/webhook", content=body, headers=headers)
    return Blip(during=during, again=again, last=last, posted_during=posted_during,
                posted=notices(adapters), refused=len(flaky.refused))
