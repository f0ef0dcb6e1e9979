"""lark-oapi requests sent over one pooled aiohttp session, on the event loop.

The SDK builds the requests (`CreateMessageRequest`, `ReplyMessageRequest`), keeps the
tenant token and parses the answers into its response types; only the HTTP exchange
happens here. Its own transport cannot be given a connection pool: the synchronous one
opens a new connection for every call (and must run in a worker thread), the
asynchronous one builds a new httpx client - some 20 ms of TLS setup - for every call.
A chat answer would pay that each time; here it reuses a kept-alive connection.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from typing import Any, TypeVar

import aiohttp
from lark_oapi.core.json import JSON
from lark_oapi.core.model import Config, RawResponse
from lark_oapi.core.token import TokenManager
from lark_oapi.core.utils.user_agent import build_user_agent

from adapters.feishu.tokens import TenantTokenCache
from adapters.http import Pool
from adapters.sending import header_seconds

__all__ = ["FeishuTransport", "rate_limit_wait", "server_error"]

# Rate limited: HTTP 429 / code 99991400 (gateway), 230020 (message frequency).
_RATE_LIMIT_CODES = frozenset({99991400, 230020})

ResponseT = TypeVar("ResponseT")
# Connections kept to the Open API: answers beyond this many at once wait their turn
# rather than open more (Feishu rate-limits a bot long before this matters).
DEFAULT_CONNECTIONS = 16


class FeishuTransport:
    """Sends SDK-built requests for one app over its `Pool` of connections (made on
    first use, in the loop that uses it), closed by `close`."""

    def __init__(self, config: Config, tokens: TenantTokenCache, *,
                 connections: int = DEFAULT_CONNECTIONS) -> None:
        self._config = config
        self._tokens = tokens
        self._pool = Pool(connections, timeout=aiohttp.ClientTimeout(total=config.timeout))
        self._user_agent = build_user_agent(source=getattr(config, "source", None),
                                            extra_tags=getattr(config, "extra_ua_tags", None))

    async def close(self) -> None:
        await self._pool.close()

    async def tenant_token(self) -> str:
        """The cached tenant token; when there is none, the SDK fetches one (a blocking
        call, so in a worker thread) and caches it for the next two hours."""
        cached = self._tokens.get(f"self_tenant_token:{self._config.app_id}")
        if cached:
            return str(cached)
        return str(await asyncio.to_thread(TokenManager.get_self_tenant_token, self._config))

    async def send(self, request: Any, response_type: type[ResponseT]) -> ResponseT:
        """`request` as the SDK would send it; the answer in the SDK's `response_type`,
        with `raw` (status, headers, body) set as the SDK sets it."""
        headers = {
            "User-Agent": self._user_agent,
            "Content-Type": "application/json; charset=utf-8",
            "Authorization": f"Bearer {await self.tenant_token()}",
        }
        body = JSON.marshal(request.body).encode() if request.body is not None else None
        async with self._pool.session().request(
            request.http_method.name, _url(self._config.domain, request.uri, request.paths),
            params=request.queries or None, headers=headers, data=body,
        ) as answer:
            raw = RawResponse()
            raw.status_code = answer.status
            raw.headers = dict(answer.headers)
            raw.content = await answer.read()
        response: Any = JSON.unmarshal(raw.content.decode("utf-8", "replace"),
                                            response_type)
        response.raw = raw
        return response  # type: ignore[no-any-return]


def _url(domain: str, uri: str, paths: dict[str, Any] | None) -> str:
    """The request's URL: path parameters quoted whole, so no value adds a segment."""
    for key, value in (paths or {}).items():
        uri = uri.replace(":" + key, urllib.parse.quote(str(value or ""), safe=""))
    return uri if uri.startswith(("http://", "https://")) else domain + uri


def server_error(response: Any) -> bool:
    """Feishu answered with a 5xx (a re-send is safe only with a uuid)."""
    status = getattr(getattr(response, "raw", None), "status_code", None)
    return isinstance(status, int) and status >= 500


def rate_limit_wait(response: Any) -> float | None:
    """Seconds to wait when Feishu said "too many requests", else None."""
    raw = getattr(response, "raw", None)
    status = getattr(raw, "status_code", None)
    if status != 429 and response.code not in _RATE_LIMIT_CODES:
        return None
    return header_seconds(getattr(raw, "headers", None), "x-ogw-ratelimit-reset")
