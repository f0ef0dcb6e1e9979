"""The connections a platform's calls reuse: one pooled aiohttp session per adapter,
kept alive between calls (an answer pays no new TLS set-up), at most so many
connections at once (calls beyond wait their turn rather than open more), proxies from
HTTPS_PROXY & co only when any is set (`adapters.base.proxies_in_environment`).

A session belongs to the event loop it was made in: one asked for from another loop
(a caller running the adapter in `asyncio.run` per command) is a new one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import aiohttp
from aiohttp.client import DEFAULT_TIMEOUT

from adapters.base import proxies_in_environment

__all__ = ["Pool"]


class Pool:
    """At most `connections` kept-alive connections, each request with `headers` and
    within `timeout` (aiohttp's default) unless it says otherwise."""

    def __init__(self, connections: int, *, headers: Mapping[str, str] | None = None,
                 timeout: aiohttp.ClientTimeout = DEFAULT_TIMEOUT) -> None:
        if connections < 1:
            raise ValueError("a pool needs at least one connection")
        self._connections = connections
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def current(self) -> aiohttp.ClientSession | None:
        """The session made last, unless it is closed."""
        session = self._session
        return session if session is not None and not session.closed else None

    def session(self) -> aiohttp.ClientSession:
        """The session of the running loop, made when there is none (or it is closed)."""
        loop = asyncio.get_running_loop()
        session = self.current
        if session is None or self._loop is not loop:
            session = self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._connections),
                trust_env=proxies_in_environment(), headers=self._headers,
                timeout=self._timeout)
            self._loop = loop
        return session

    async def close(self) -> None:
        """Close the session, when it is open and of the running loop; idempotent."""
        session = self.current
        if session is not None and self._loop is asyncio.get_running_loop():
            await session.close()
        self._session = None
        self._loop = None
