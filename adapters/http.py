"""The connections a platform's calls reuse: one pooled aiohttp session per adapter,
kept alive between calls (an answer pays no new TLS set-up), at most so many
connections at once (calls beyond wait their turn rather than open more), proxies from
HTTPS_PROXY & co only when any is set (`adapters.base.proxies_in_environment`).

A session belongs to the event loop it was made in: one asked for from another loop
(a caller running the adapter in `asyncio.run` per command) is a new one. What goes
wrong on the way (`exchange`) is told apart as the send loop needs it - the platform
never took the request, or it went out and its answer was lost - and said without the
path of the URL called, which may hold a credential (a bot token).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.client import DEFAULT_TIMEOUT

from adapters.base import proxies_in_environment
from adapters.sending import AnswerLost

__all__ = ["Pool", "RequestFailed", "Unanswered", "exchange", "method_name", "phased_timeout",
           "without_path"]


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
            self._let_go()
            session = self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._connections),
                trust_env=proxies_in_environment(), headers=self._headers,
                timeout=self._timeout)
            self._loop = loop
        return session

    async def close(self) -> None:
        """Close the session (on its own loop when that is another); idempotent."""
        session = self.current
        if session is not None and self._loop is asyncio.get_running_loop():
            await session.close()
            self._session = self._loop = None
        self._let_go()

    def _let_go(self) -> None:
        """Forget the session made on another loop, closing it there while that loop
        runs: a session is closed only on the loop it was made on."""
        session, loop = self.current, self._loop
        self._session = self._loop = None
        if session is not None and loop is not None and loop.is_running() \
                and not loop.is_closed():
            asyncio.run_coroutine_threadsafe(session.close(), loop)


class RequestFailed(Exception):
    """The platform did not take the request: no connection was made (`timed_out`: not
    in time), or the exchange failed before anything was sent."""

    def __init__(self, text: str, *, timed_out: bool = False) -> None:
        super().__init__(text)
        self.timed_out = timed_out


class Unanswered(AnswerLost):
    """The request went out (the connection was made) and no answer came: it timed out
    while waiting, or the connection dropped. The platform may have done what it asked."""


async def exchange(session: aiohttp.ClientSession, method: str, url: str, *, data: Any,
                   timeout: aiohttp.ClientTimeout, platform: str) -> tuple[int, bytes]:
    """`method url` with `data` on `session`: the answer's status and body, or what went
    wrong as `RequestFailed` or `Unanswered`."""
    try:
        async with session.request(method, url, data=data, timeout=timeout) as response:
            return response.status, await response.read()
    except (aiohttp.ConnectionTimeoutError, aiohttp.ClientConnectorError) as err:
        # No connection was made: the platform never saw the request.
        raise RequestFailed(without_path(f"aiohttp.{type(err).__name__}: {err}", url),
                            timed_out=isinstance(err, TimeoutError)) from err
    except TimeoutError as err:  # waiting for the answer (or the whole exchange)
        raise Unanswered(f"Timed out waiting for {platform}'s answer to {method_name(url)}") \
            from err
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError,
            aiohttp.ClientOSError) as err:
        raise Unanswered(without_path(
            f"aiohttp.{type(err).__name__} after sending {method_name(url)}: {err}", url)
            ) from err
    except aiohttp.ClientError as err:
        raise RequestFailed(without_path(f"aiohttp.{type(err).__name__}: {err}", url)) \
            from err


def phased_timeout(*, pool: float | None, connect: float | None, write: float | None,
                   read: float | None) -> aiohttp.ClientTimeout:
    """A request's deadlines from those of its phases (None: no limit): aiohttp has no
    write timeout of its own, so the whole exchange gets the time of all its phases,
    and each phase that aiohttp knows keeps its own limit."""
    return aiohttp.ClientTimeout(total=_sum(pool, connect, write, read),
                                 connect=_sum(pool, connect), sock_connect=connect,
                                 sock_read=read)


def _sum(*parts: float | None) -> float | None:
    """A deadline made of several phases; None (no limit) when any phase has none."""
    return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)


def method_name(url: str) -> str:
    """The API method a URL calls (its last segment: `sendMessage`), never the path
    before it."""
    return urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1] or "the request"


def without_path(text: str, url: str) -> str:
    """An error text that never quotes the path of `url` (it may hold a credential)."""
    path = urlsplit(url).path
    return text.replace(path, "/<path>") if path and path != "/" else text
