"""For "killed mid-post": a proxy in front of a platform that can park one request
before or after the platform saw it."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

import httpx
from aiohttp import ClientSession, ClientTimeout, web

from testkit.fakes.aiohttp_server import ThreadedAiohttpServer


@dataclass
class Hold:
    """Which requests a `HoldingProxy` parks, and whether it has."""

    path_part: str
    when: str  # "before": the platform never sees it; "after": it did, the caller not
    count: int = 1  # how many matching requests it parks
    body_part: bytes = b""  # only requests whose body holds this (e.g. a channel id)
    parked: threading.Event = field(default_factory=threading.Event)  # all `count` are
    release: asyncio.Event | None = None
    taken: int = 0


class HoldingProxy(ThreadedAiohttpServer):
    """A reverse proxy on 127.0.0.1:0 in front of one fake platform.

    Requests and answers pass unchanged, except that after `hold(path_part, when)` the
    next request whose path contains `path_part` is parked: `when="before"` before it is
    forwarded (the platform never sees it: a post lost in flight), `when="after"` once
    the platform has answered (the platform holds the message, the caller never hears).
    `parked` is set while a request is held; `release()` lets it go - a "before" request
    whose caller has gone is dropped, as a broken connection would drop it.
    """

    thread_name = "holding-proxy"

    def __init__(self, upstream: str) -> None:
        super().__init__()
        parts = httpx.URL(upstream)
        self.upstream_origin = f"{parts.scheme}://{parts.host}:{parts.port}"
        # What follows the origin, exactly as given ("" for a bare origin).
        after_scheme = upstream.split("://", 1)[1]
        self.upstream_path = after_scheme[after_scheme.find("/"):] if "/" in after_scheme \
            else ""
        self.holds: list[Hold] = []
        self.forwarded = 0
        self._session: ClientSession | None = None

    @property
    def base_url(self) -> str:
        """The upstream base URL with this proxy's origin."""
        return f"http://127.0.0.1:{self.port}{self.upstream_path}"

    def __exit__(self, *exc: object) -> None:
        self.release()
        self.stop()

    async def on_start(self) -> None:
        self._session = ClientSession(timeout=ClientTimeout(total=30))

    async def on_stop(self) -> None:
        if self._session is not None:
            await self._session.close()

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=8 << 20)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        return app

    def hold(self, path_part: str, when: str = "before", *, count: int = 1,
             body_part: bytes = b"") -> Hold:
        """Park the next `count` requests whose path contains `path_part` (and whose
        body contains `body_part`)."""
        hold = Hold(path_part, when, count=count, body_part=body_part)
        self.holds.append(hold)
        return hold

    def release(self) -> None:
        loop = self._loop
        if loop is None:
            return
        for hold in self.holds:
            if hold.release is not None:
                loop.call_soon_threadsafe(hold.release.set)
        self.holds = []

    def _take_hold(self, path: str, body: bytes) -> Hold | None:
        for hold in self.holds:
            if hold.path_part in path and hold.body_part in body and \
                    hold.taken < hold.count:
                hold.taken += 1
                if hold.release is None:
                    hold.release = asyncio.Event()
                return hold
        return None

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        hold = self._take_hold(request.path, body)
        if hold is not None:
            assert hold.release is not None
            if hold.when == "before":
                if hold.taken == hold.count:
                    hold.parked.set()
                await hold.release.wait()
                raise web.HTTPBadGateway(text="dropped in flight")
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in {"host", "content-length", "transfer-encoding"}}
        async with self._session.request(
            request.method, f"{self.upstream_origin}{request.path_qs}", data=body,
            headers=headers,
        ) as answer:
            payload = await answer.read()
            status = answer.status
            out_headers = {k: v for k, v in answer.headers.items()
                           if k.lower() not in {"content-length", "transfer-encoding",
                                                "content-encoding", "connection"}}
        self.forwarded += 1
        if hold is not None and hold.when == "after":
            assert hold.release is not None
            if hold.taken == hold.count:
                hold.parked.set()  # the platform has it; its answer waits here
            await hold.release.wait()
        return web.Response(body=payload, status=status, headers=out_headers)
