"""Every HTTP request gets an id: the caller's `X-Request-Id` when it is a plain token
(a proxy or load balancer that sets one), else a new one. Each log line written while
the request is served carries it (`bot.logs`), uvicorn's access line included, and the
answer's `X-Request-Id` header names it, so an operator goes from a response to its
lines."""

from __future__ import annotations

import re
import secrets

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.logs import request_id

HEADER = b"x-request-id"
_TOKEN = re.compile(rb"[A-Za-z0-9._:-]{1,64}")


def incoming_id(scope: Scope) -> str:
    """The caller's id when it is a short plain token (anything else could forge log
    lines), else a new random one."""
    for name, value in scope.get("headers", ()):
        if name == HEADER and _TOKEN.fullmatch(value):
            return str(value.decode("ascii"))
    return secrets.token_hex(8)


class RequestIds:
    """ASGI middleware: the request's id in the log context and in the answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = incoming_id(scope)
        token = request_id.set(rid)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", ()) if k != HEADER]
                message = {**message, "headers": [*headers, (HEADER, rid.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id.reset(token)
