"""The server `bench.commands` measures, in a child process of its own: the whole app on
uvicorn with serve's protocol and limits, the example snapshot behind the real Redis
cache as its PR data, the fake platforms as its APIs."""

from __future__ import annotations

import asyncio
import signal
import socket
from pathlib import Path
from typing import Any

from bench.command_traffic import (
    ECHO_PATH,
)
from testkit import EXAMPLES

# The line the child prints once it listens: the port and the event loop it runs.
READY = "bench-server-ready"

class SnapshotUpstream:
    """The example snapshot as `CachedSource`'s upstream, standing where GitHub would."""

    def __init__(self, path: Path) -> None:
        from bot.snapshot import read_snapshot

        self.snapshot = read_snapshot(path)
        self.by_number = {pull.number: pull for pull in self.snapshot.pulls}

    def fetch_week(self, repo: str, week: str) -> Any:
        return self.snapshot

    def fetch_pull(self, repo: str, number: int) -> Any:
        return self.by_number.get(number)


def serve(redis_url: str, slack_api: str, telegram_api: str, feishu_domain: str,
          profile: str | None = None) -> None:
    """Child process: the app of `bot.web.app` plus the echo route, under uvicorn on a
    free loopback port; prints READY and the port once the lifespan has started. With
    `profile`, the event loop's thread runs under cProfile, written there at exit."""
    import redis
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from bot.config import load_config
    from bot.events import Events
    from bot.store.cache import CachedSource
    from bot.store.redis.cache import Cache
    from bot.web.app import create_app
    from bot.web.connections import uvicorn_limits
    from bot.web.metrics import Metrics

    config = load_config(EXAMPLES / "prdigest.toml")
    metrics = Metrics()
    events = Events()
    events.subscribe(metrics.on)
    cache = Cache(redis.Redis.from_url(redis_url), events=events)
    source = CachedSource(SnapshotUpstream(EXAMPLES / "snapshot.json"), cache, config,
                          events=events)
    app = create_app(
        config, freeze_heap=True, redis_url=redis_url, source=source, metrics=metrics,
        background=False,
        adapter_overrides={"slack": {"api_url": slack_api},
                           "telegram": {"api_url": telegram_api},
                           "feishu": {"domain": feishu_domain}},
    )

    async def echo(request: Request) -> Response:
        return Response(await request.body(),
                        media_type=request.headers.get("content-type", "text/plain"))

    app.router.routes.append(Route(ECHO_PATH, echo, methods=["POST"]))
    # proto IPPROTO_TCP, as asyncio's own listeners have it: asyncio only sets
    # TCP_NODELAY on sockets that say so, and without it a response's headers and body
    # (two writes) wait out the client's delayed ACK, some 40 ms.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    # The protocol and limits of `prdigest serve` (bot.web.connections), with one
    # change: connections are kept as the platforms' senders and proxies keep them, so
    # there are no reconnects between levels.
    limits = {**uvicorn_limits(config.server), "timeout_keep_alive": 75}
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning",
                                           access_log=False, backlog=4096, **limits))

    async def run() -> None:
        task = asyncio.create_task(server.serve(sockets=[listener]))
        while not server.started:
            if task.done():
                await task
                raise SystemExit("the server stopped during startup")
            await asyncio.sleep(0.01)
        loop = type(asyncio.get_running_loop())
        print(f"{READY} {listener.getsockname()[1]} {loop.__module__}.{loop.__qualname__}",
              flush=True)
        await task

    # uvicorn shuts down gracefully on SIGTERM, then raises it again for the previous
    # handler: this one ends the process quietly (and lets the profile be written).
    signal.signal(signal.SIGTERM, _exit_quietly)
    # The loop `uvicorn.run` (and so `prdigest serve`) would pick: uvloop when installed.
    loop_factory = server.config.get_loop_factory()
    if profile is None:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(run())
        return
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(run())
    finally:
        profiler.disable()
        profiler.dump_stats(profile)


def _exit_quietly(signum: int, frame: object) -> None:
    raise SystemExit(0)
