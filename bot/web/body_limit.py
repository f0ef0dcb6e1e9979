"""Every request body read under a byte cap, before any route (or signature check) sees it.

The webhooks are open to anyone: a body is unauthenticated until its signature is
checked, and that needs the whole body. So the cap comes first, in one place for every
route: a `Content-Length` over the route's cap (or not a number) is refused before a
byte is read, and a chunked body is read only up to the cap - past it the request gets
413 and the connection is closed, so the rest is never buffered. The route then reads
the body from memory, at most its cap.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

DEFAULT_BODY_BYTES = 64 * 1024
"""The cap of a route that names none: the report pages, health and metrics take no
body at all."""

_MAX_LENGTH_DIGITS = 19
"""A `Content-Length` longer than this is not a size any route takes."""


class BodyLimit:
    """ASGI middleware: `limits` maps a path to its cap in bytes; other paths get
    `default_bytes`. `refusal_headers[path]`: what a refusal there also says, for a
    sender that would otherwise send the same bytes again (a platform declares them)."""

    def __init__(self, app: ASGIApp, limits: Mapping[str, int], *,
                 default_bytes: int = DEFAULT_BODY_BYTES,
                 refusal_headers: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.app = app
        self.limits = dict(limits)
        self.default_bytes = default_bytes
        self.refusal_headers = {path: dict(h) for path, h in (refusal_headers or {}).items()}

    def _refusal(self, path: str) -> Mapping[str, str]:
        return self.refusal_headers.get(path, {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        cap = self.limits.get(path, self.default_bytes)
        try:
            declared = _content_length(scope)
        except ValueError:
            await _refuse(scope, receive, send, 400, "bad Content-Length", path,
                          self._refusal(path))
            return
        if declared is not None and declared > cap:
            await _refuse(scope, receive, send, 413, "payload too large", path,
                          self._refusal(path))
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the caller is gone: nobody to answer
            body += message.get("body", b"")
            if len(body) > cap:
                await _refuse(scope, receive, send, 413, "payload too large", path,
                              self._refusal(path))
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(bytes(body), receive), send)


def _content_length(scope: Scope) -> int | None:
    """The declared length, None when not declared; ValueError when not one plain number."""
    values = {value for name, value in scope.get("headers", ()) if name == b"content-length"}
    if not values:
        return None
    text = values.pop().strip()
    if values or not text or len(text) > _MAX_LENGTH_DIGITS or not text.isdigit():
        raise ValueError("bad Content-Length")
    return int(text)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body read so far as one message; then whatever the server sends next
    (a disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, reason: str,
                  path: str, headers: Mapping[str, str]) -> None:
    """The error, with `Connection: close`: the server drops what is still coming
    instead of reading it; `headers` are the route's platform's own (one that would
    send the same bytes again is told not to)."""
    log.info("refused a request body on %s: %s", path[:100], reason)
    response = JSONResponse({"error": reason}, status_code=status,
                            headers={"Connection": "close", **headers})
    await response(scope, receive, send)
