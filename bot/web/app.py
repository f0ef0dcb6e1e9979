"""One ASGI app for everything that arrives over HTTP, and the work that runs beside it.

Routes: each configured chat platform's webhook (the adapters' own routes),
`/github/webhook` (merged-PR notices), `/reports/{owner}/{repo}[/{week}]` (report
pages), `/healthz`, the probes `/livez` and `/readyz`, and `/metrics`. The lifespan
starts the adapters (Socket Mode, long polling, long connection), the weekly scheduler
and, when no GitHub webhook secret is set, the merge poller; it stops them in reverse
order.

A platform whose secrets are not in the environment is simply off (shown in
`/healthz`), so the example config starts anywhere. Without Redis the bot still
answers and serves reports, uncached; subscriptions, the weekly schedule and
cross-replica dedupe need it, and `/healthz` says so.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route

from bot.config import Config
from bot.web.body_limit import BodyLimit
from bot.web.github_webhook import MAX_WEBHOOK_BYTES, github_webhook
from bot.web.health import healthz, livez, metrics_endpoint, readyz
from bot.web.home import home, not_found
from bot.web.reports import report_index, report_page
from bot.web.request_ids import RequestIds
from bot.web.services import Services, build_services


def create_app(config: Config, *, freeze_heap: bool = False, **options: Any) -> Starlette:
    """The whole service as one Starlette app; `options` go to `build_services`.
    `freeze_heap`: see `freeze_startup_heap` (for a long-running server process)."""
    services = build_services(config, **options)
    return app_for(services, freeze_heap=freeze_heap)


def freeze_startup_heap() -> None:
    """Everything alive once the service has started - modules, the SDKs' tables,
    templates, config - lives as long as the process. Moved out of the cyclic
    collector's sight, its full collections no longer walk some 400,000 objects: each
    took about 0.3 s during which no request was answered."""
    gc.collect()
    gc.freeze()


def app_for(services: Services, *, freeze_heap: bool = False) -> Starlette:
    """The Starlette app around ready services (the lifespan starts and stops them)."""
    routes: list[BaseRoute] = []
    limits = {"/github/webhook": MAX_WEBHOOK_BYTES}
    refusals: dict[str, dict[str, str]] = {}
    for adapter in services.process.adapters.values():
        mounted = adapter.routes()
        routes += mounted
        paths = [route.path for route in mounted if isinstance(route, Route)]
        limits |= dict.fromkeys(paths, adapter.max_inbound_bytes)
        refusals |= {path: dict(adapter.refusal_headers) for path in paths}
    routes += [
        Route("/", home, methods=["GET"]),
        Route("/github/webhook", github_webhook, methods=["POST"]),
        Route("/reports/{owner}/{repo}", report_index, methods=["GET"]),
        Route("/reports/{owner}/{repo}/{week}", report_page, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/livez", livez, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await services.start()
        if freeze_heap:
            freeze_startup_heap()
        try:
            yield
        finally:
            await services.stop()

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found},
                    middleware=[Middleware(RequestIds),
                                Middleware(BodyLimit, limits=limits,
                                           refusal_headers=refusals)])
    app.state.services = services
    return app
