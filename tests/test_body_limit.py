"""The byte cap every request body is read under (`bot.web.body_limit`): an oversized
`Content-Length` is refused before a byte is read, a chunked body is read no further
than the cap, and a body within the cap reaches the route whole."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Scope

from bot.web.body_limit import BodyLimit

CAP = 1000


async def _echo(request: Request) -> Response:
    return JSONResponse({"length": len(await request.body())})


def _app() -> Starlette:
    return Starlette(routes=[Route("/in", _echo, methods=["POST"]),
                             Route("/other", _echo, methods=["POST"])],
                     middleware=[Middleware(BodyLimit, limits={"/in": CAP},
                                            default_bytes=10)])


async def _post(path: str, **kwargs: object) -> httpx.Response:
    transport = httpx.ASGITransport(app=_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.post(path, **kwargs)  # type: ignore[arg-type]


async def test_a_body_within_the_cap_reaches_the_route_whole() -> None:
    response = await _post("/in", content=b"x" * CAP)
    assert response.status_code == 200
    assert response.json() == {"length": CAP}


async def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    response = await _post("/in", content=b"x" * (CAP + 1))
    assert response.status_code == 413
    assert response.headers["connection"] == "close"


async def test_a_path_without_its_own_cap_gets_the_default() -> None:
    assert (await _post("/other", content=b"x" * 11)).status_code == 413
    assert (await _post("/other", content=b"x" * 10)).status_code == 200


@pytest.mark.parametrize("length", [b"abc", b"", b"-1", b"1e3", b"9" * 5000, b"\xc3\xa9"])
async def test_a_malformed_content_length_is_a_400(length: bytes) -> None:
    messages = await _raw([(b"content-length", length)], [b"{}"])
    assert messages[0]["status"] == 400


async def test_the_raw_body_stops_being_read_past_the_cap() -> None:
    pieces = [b"z" * 300] * 100
    taken: list[int] = []
    messages = await _raw([(b"transfer-encoding", b"chunked")], pieces, taken=taken)
    assert messages[0]["status"] == 413
    assert len(taken) == 4  # 1,200 bytes: one piece past the cap, then no more


async def _raw(headers: list[tuple[bytes, bytes]], pieces: list[bytes],
               taken: list[int] | None = None) -> list[Message]:
    """One request through the ASGI interface, recording how many body messages the
    app asked for."""
    taken = [] if taken is None else taken
    queue = list(pieces)
    scope: Scope = {"type": "http", "method": "POST", "path": "/in", "raw_path": b"/in",
                    "query_string": b"", "headers": headers, "http_version": "1.1",
                    "scheme": "http", "server": ("test", 80), "client": ("c", 1),
                    "root_path": "", "asgi": {"version": "3.0"}}
    out: list[Message] = []

    async def receive() -> Message:
        if not queue:
            return {"type": "http.disconnect"}
        taken.append(1)
        body = queue.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(queue)}

    async def send(message: Message) -> None:
        out.append(message)

    await _app()(scope, receive, send)
    return out
