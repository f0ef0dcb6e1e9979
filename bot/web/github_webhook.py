"""`POST /github/webhook`: a GitHub delivery verified, deduplicated, and a merged PR
announced."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot.chat.inbound import RETRY_LATER
from bot.delivery.merges import MergeAnnouncer
from bot.github.events import PayloadError, merged_pull, signature_valid
from bot.store.claims import Begun, Held
from bot.store.coordination import StoreUnavailable
from bot.web.services import services_of

log = logging.getLogger(__name__)

MAX_WEBHOOK_BYTES = 5 << 20
WEBHOOK_ANSWER_SECONDS = 8.0


async def github_webhook(request: Request) -> Response:
    """A GitHub delivery: verified, deduplicated, and a merged PR announced."""
    services = services_of(request)
    metrics = services.metrics
    if not services.webhook_secret:
        return JSONResponse({"error": "GitHub webhook not configured"}, status_code=404)
    declared = request.headers.get("content-length", "0")
    if not declared.isdigit() or int(declared) > MAX_WEBHOOK_BYTES:
        return JSONResponse({"error": "payload too large"}, status_code=413)
    body = await request.body()
    if len(body) > MAX_WEBHOOK_BYTES:
        return JSONResponse({"error": "payload too large"}, status_code=413)
    if not signature_valid(services.webhook_secret, body,
                           request.headers.get("x-hub-signature-256")):
        metrics.webhook("unverified", "rejected")
        return JSONResponse({"error": "invalid signature"}, status_code=401)
    event = request.headers.get("x-github-event", "")
    label = event if event in ("ping", "pull_request") else "other"
    if event == "ping":
        metrics.webhook(label, "ok")
        return JSONResponse({"ok": True})
    if event != "pull_request":
        metrics.webhook(label, "ignored")
        return JSONResponse({"ignored": "event"}, status_code=202)
    delivery = request.headers.get("x-github-delivery", "").strip()
    if not delivery or len(delivery) > 100:
        metrics.webhook(label, "bad")
        return JSONResponse({"error": "X-GitHub-Delivery is required"}, status_code=400)
    try:
        payload = json.loads(body)
        if not isinstance(payload, dict):
            raise PayloadError("expected a JSON object")
        merged = merged_pull(payload)
    except (ValueError, PayloadError, RecursionError) as exc:
        # RecursionError: JSON nested too deep for the parser, still the sender's fault.
        metrics.webhook(label, "bad")
        return JSONResponse({"error": f"unreadable payload: {exc}"}, status_code=400)
    if merged is None:
        metrics.webhook(label, "ignored")
        return JSONResponse({"ignored": "not a merge"}, status_code=202)
    # One claim per merge, checked before anything is fetched: a delivery replayed under
    # a new id, or a merge the poller announced, costs no GitHub request. Held by this
    # process until the notices are recorded sent: a redelivery after a crash (the owner
    # no longer alive) is handled again; one after success is not; one while another
    # process holds it - at work, or dead with its alive mark not yet lapsed - is asked
    # for again later.
    notifier = services.process.notifier
    if notifier is None:  # a process that does not serve chat announces nothing
        return JSONResponse({"error": "merge notices are off"}, status_code=503)
    merges = MergeAnnouncer(services.process.claims, notifier)
    claim = merges.key(merged)
    try:
        begun = await merges.claim(merged)
    except StoreUnavailable as exc:
        # Without the claim a redelivery could notify twice: let GitHub redeliver later.
        log.warning("github webhook: Redis unavailable (%s); asked for a redelivery",
                    exc.reason)
        metrics.webhook(label, "unavailable")
        return _redeliver_later("storage unavailable, redeliver later")
    if begun is Held.ELSEWHERE:
        log.info("github webhook: %s is being handled by another process; asked for a "
                 "redelivery", claim)
        metrics.webhook(label, "busy")
        return _redeliver_later("being handled elsewhere, redeliver later")
    if not isinstance(begun, Begun):
        metrics.webhook(label, "duplicate")
        return JSONResponse({"duplicate": True})

    async def announce() -> dict[str, Any]:
        # A failure, or a channel's notice another process holds, releases the claim,
        # so a redelivery or the poller's reconciliation tries again.
        result = await merges.announce_claimed(merged)
        return {"notified": result.notified, "failed": result.failed,
                **({"waiting": result.waiting} if result.waiting else {}),
                **({"held": result.held} if result.held else {})}

    task = asyncio.ensure_future(announce())
    services.track(task)
    try:
        # Real time: GitHub waits for the HTTP answer in real seconds.
        answer = await asyncio.wait_for(asyncio.shield(task), timeout=WEBHOOK_ANSWER_SECONDS)
    except TimeoutError:
        metrics.webhook(label, "accepted")
        return JSONResponse({"accepted": True}, status_code=202)
    except StoreUnavailable as exc:
        log.warning("merged-PR notice: Redis unavailable (%s)", exc.reason)
        metrics.webhook(label, "unavailable")
        return _redeliver_later("storage unavailable, redeliver later")
    except Exception:
        log.exception("merged-PR notice failed")
        metrics.webhook(label, "failed")
        return JSONResponse({"error": "notice failed"}, status_code=500)
    if "waiting" in answer:
        # A channel's notice is held by another process that may have died: not done.
        metrics.webhook(label, "busy")
        return JSONResponse(answer, status_code=RETRY_LATER.status,
                            headers=RETRY_LATER.headers)
    metrics.webhook(label, "ok")
    return JSONResponse(answer)


def _redeliver_later(reason: str) -> Response:
    """A 503: GitHub shows the delivery failed, and its "redeliver" sends it again."""
    return JSONResponse({"error": reason}, status_code=RETRY_LATER.status,
                        headers=RETRY_LATER.headers)
