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

from adapters.slack.adapter import EVENTS_PATH, MAX_BODY_BYTES
from bot.source import SnapshotSource
from bot.web.app import create_app
from bot.web.body_limit import BodyLimit
from testkit.fakes.slack import BOT_TOKEN, SIGNING_SECRET
from testkit.server_support import clear_env, clock, example_config, example_snapshot

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


async def test_a_refusal_carries_the_headers_its_route_declares() -> None:
    app = Starlette(routes=[Route("/in", _echo, methods=["POST"]),
                            Route("/other", _echo, methods=["POST"])],
                    middleware=[Middleware(BodyLimit, limits={"/in": CAP, "/other": CAP},
                                           refusal_headers={"/in": {"X-No-Retry": "1"}})])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        mine = await client.post("/in", content=b"x" * (CAP + 1))
        other = await client.post("/other", content=b"x" * (CAP + 1))
    assert (mine.status_code, mine.headers.get("x-no-retry")) == (413, "1")
    assert (other.status_code, other.headers.get("x-no-retry")) == (413, None)


async def test_the_slack_route_tells_slack_not_to_send_a_refused_body_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Slack re-sends a delivery it got no 200 for, unless told `X-Slack-No-Retry`; the
    adapter declares it (`refusal_headers`), the other routes say nothing of it."""
    clear_env(monkeypatch)
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    app = create_app(example_config(), source=SnapshotSource(example_snapshot()), clock=clock(),
                     background=False)
    too_big = b"x" * (MAX_BODY_BYTES + 1)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        slack = await client.post(EVENTS_PATH, content=too_big)
        page = await client.post("/reports/acme/lumen", content=too_big)
    assert (slack.status_code, slack.headers.get("x-slack-no-retry")) == (413, "1")
    assert (page.status_code, page.headers.get("x-slack-no-retry")) == (413, None)
