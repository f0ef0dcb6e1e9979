"""An aiohttp app on 127.0.0.1:0, served by its own event loop in its own thread.

Fakes run apart from the test's loop: several SDK paths block, and a fake on the same
loop would deadlock against them. A caller that never blocks its loop (a load
generator) may serve a fake in that loop instead (`running_here`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Self

from aiohttp import web


class ThreadedAiohttpServer:
    """Subclasses give `build_app()`; `on_start`/`on_stop` run on the server's loop."""

    thread_name = "fake-server"
    # A real API's front door: a burst of new connections (a pool opening at once) must
    # not lose SYNs and wait out TCP's one-second retransmit.
    backlog = 256

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    def build_app(self) -> web.Application:
        raise NotImplementedError

    async def on_start(self) -> None:
        """Before the app is built (e.g. open a client session)."""

    async def on_stop(self) -> None:
        """Before the app is cleaned up (e.g. close WebSockets, sessions)."""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @contextlib.asynccontextmanager
    async def running_here(self) -> AsyncIterator[Self]:
        """Served by the caller's running loop rather than a thread of its own: no
        thread handoff per request (helpers that hop to the fake's loop from another
        thread, like pushing events, are then not for use from this loop)."""
        self._loop = asyncio.get_running_loop()
        await self._serve()
        try:
            yield self
        finally:
            await self.on_stop()
            if self._runner is not None:
                await self._runner.cleanup()
            self._loop = None

    def start(self) -> None:
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def run() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._serve())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name=self.thread_name, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError(f"{self.thread_name} did not start")

    async def _serve(self) -> None:
        await self.on_start()
        self._runner = web.AppRunner(self.build_app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=self.backlog)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def stop(self) -> None:
        if self._loop is None:
            return

        async def shutdown() -> None:
            await self.on_stop()
            if self._runner is not None:
                await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop.close()
        self._loop = None
