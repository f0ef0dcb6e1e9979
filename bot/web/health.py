"""`/healthz` (for people), `/livez` and `/readyz` (for an orchestrator's probes) and
`/metrics`.

The probes answer different questions. Liveness: does the process and its event loop
still answer - nothing outside it counts, so an outage of Redis or GitHub never has
every replica restarted at once. Readiness: should traffic come here - Redis answers
(when configured), the config is loaded and every platform whose secrets are set has
its adapter; while Redis is away a replica is taken out of the load balancer and
comes back by itself."""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot.config import secret
from bot.github.pool import PooledSource
from bot.web.metrics import CONTENT_TYPE_LATEST
from bot.web.services import services_of

METRICS_TOKEN_ENV = "PRDIGEST_METRICS_TOKEN"


async def healthz(request: Request) -> Response:
    """Redis, GitHub, each platform's configuration, the background work; 503 when
    Redis is configured but unreachable, "degraded" (still 200: the bot answers, from
    the cache or with "try again later") while GitHub's requests fail or the latest
    weekly-schedule pass failed (its count and last error under `scheduler`)."""
    services = services_of(request)
    redis_state = await services.redis_status()
    healthy = redis_state["ok"] or not redis_state["configured"]
    github = services.process.github
    scheduler = services.process.scheduler
    github_ok = github is None or services.github_health.ok
    # The latest weekly-schedule pass failed or left a channel out: posts may be missing.
    schedule_ok = scheduler is None or scheduler.stats.last_pass_ok
    body = {
        "status": ("ok" if github_ok and schedule_ok else "degraded") if healthy
                  else "unavailable",
        "redis": redis_state,
        "platforms": services.platform_status(),
        "github": {
            "source": "github" if github is not None else "snapshot",
            "token": bool(secret(services.config.github.token_env)),
            "app": github is not None and github.app_auth is not None,
            "points_remaining": github.budget.remaining if github else None,
            # A pool of credentials: each one's name, reach and points (never a token).
            **({"credentials": github.status()} if isinstance(github, PooledSource) else {}),
            **(services.github_health.status() if github is not None
               else {"ok": True}),
        },
        "narrator": services.narrator_status(),
        **services.background_status(),
    }
    return JSONResponse(body, status_code=200 if healthy else 503,
                        headers={"Cache-Control": "no-store"})


async def livez(request: Request) -> Response:
    """200 while the process serves requests: answering at all proves the event loop
    turns. Never asks Redis, GitHub or a platform."""
    services = services_of(request)
    return JSONResponse({"status": "ok", "stopping": services.stopping},
                        headers={"Cache-Control": "no-store"})


async def readyz(request: Request) -> Response:
    """200 when this replica should get traffic, else 503 with the check that failed:
    Redis reachable (when configured; a Redis user without scripting is not ready
    either), the config loaded, every platform whose secrets are set with its adapter,
    and not shutting down."""
    services = services_of(request)
    redis_state = await services.redis_status()
    redis_ok = bool(redis_state["ok"]) or not redis_state["configured"]
    platforms = services.platform_readiness()
    checks = {
        "redis": {"ok": redis_ok, **{k: v for k, v in redis_state.items() if k != "ok"}},
        "config": {"ok": True, "repos": len(services.config.repos),
                   "channels": len(services.config.channels)},
        "platforms": platforms,
        "started": {"ok": services.started and not services.stopping},
    }
    ready = redis_ok and services.started and not services.stopping and \
        all(state["ok"] for state in platforms.values())
    return JSONResponse({"status": "ready" if ready else "not ready", "checks": checks},
                        status_code=200 if ready else 503,
                        headers={"Cache-Control": "no-store"})


async def metrics_endpoint(request: Request) -> Response:
    """The counters; with $PRDIGEST_METRICS_TOKEN set, only for `Authorization: Bearer
    <token>` (401 otherwise), so the port users reach need not expose them."""
    token = secret(METRICS_TOKEN_ENV)
    if token is not None:
        sent = request.headers.get("authorization", "")
        if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            return Response("metrics need the bearer token\n", status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})
    services = services_of(request)
    return Response(services.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
