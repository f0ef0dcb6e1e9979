"""What one client connection may hold of `prdigest serve`, and for how long.

uvicorn bounds idle time between requests (`timeout_keep_alive`), the size of a request
head (`h11_max_incomplete_event_size`, h11 only - httptools has no such cap) and answers
503 beyond `limit_concurrency`; it has no deadline for receiving a request, so a client
sending a head byte by byte (or nothing at all) holds its socket for ever, and the
concurrency limit only turns away requests, never connections. `GuardedH11Protocol`
adds both: a request not fully received within the read timeout closes its
connection, and a connection beyond the limit is answered 503 and closed at once.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Iterable
from typing import Any, ClassVar

import h11
from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.h11_impl import H11Protocol

from bot.config import ServerConfig
from bot.redaction import Redact, report_key_filters

log = logging.getLogger(__name__)

_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: 20\r\nconnection: close\r\n\r\nToo many connections")
_RECEIVING = (h11.IDLE, h11.SEND_BODY)
"""The client's states while its request is not fully received yet."""


class _Tally:
    """Counts closed connections and logs them at most once per `every` seconds, so a
    flood of slow clients writes a line, not one line each."""

    def __init__(self, what: str, every: float = 10.0) -> None:
        self.what = what
        self.every = every
        self.count = 0
        self._unlogged = 0
        self._logged_at = -every

    def add(self) -> None:
        self.count += 1
        self._unlogged += 1
        now = time.monotonic()
        if now - self._logged_at >= self.every:
            log.warning("%d %s", self._unlogged, self.what)
            self._unlogged = 0
            self._logged_at = now


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request read deadline and a hard connection cap
    (`limit_concurrency`). Built by `guarded_protocol` with its read timeout."""

    read_timeout_seconds: ClassVar[float] = 15.0
    timed_out: ClassVar[_Tally] = _Tally("connection(s) closed: request not received "
                                         "within the read timeout")
    refused: ClassVar[_Tally] = _Tally("connection(s) refused: server.max_connections "
                                       "reached")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        limit = self.limit_concurrency
        if limit is not None and len(self.connections) > limit:
            self.refused.add()
            transport.write(_REFUSAL)
            transport.close()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()  # a kept-alive connection has the same time for its next request

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Start the deadline when a request is awaited (never restart it: a byte now and
        then must not keep a connection); stop it once the request is in."""
        if self.conn.their_state not in _RECEIVING or self.transport.is_closing():
            self._disarm()
        elif self._deadline is None:
            self._deadline = self.loop.call_later(self.read_timeout_seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.timed_out.add()
            self.transport.close()


def guarded_protocol(read_timeout_seconds: float) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn is given (`http=`), with this read timeout."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"read_timeout_seconds": read_timeout_seconds})


def uvicorn_limits(server: ServerConfig) -> dict[str, Any]:
    """`uvicorn.run` keyword arguments for the `[server]` connection limits."""
    return {
        "http": guarded_protocol(server.read_timeout_seconds),
        "ws": "none",  # nothing here speaks WebSocket: no upgrade to another parser
        "timeout_keep_alive": server.keep_alive_seconds,
        "limit_concurrency": server.max_connections,
        "h11_max_incomplete_event_size": server.max_header_bytes,
    }


def uvicorn_log_config(keys: Iterable[str] = ()) -> dict[str, Any]:
    """uvicorn's own logging setup, with a private report's key taken out of its
    lines: `?key=` in the access log's request lines, and each of `keys` anywhere."""
    config = copy.deepcopy(LOGGING_CONFIG)
    filters = report_key_filters(keys)
    config["filters"] = {f"report_key_{n}": {"()": Redact, "pattern": one.pattern}
                         for n, one in enumerate(filters)}
    for handler in config["handlers"].values():
        handler["filters"] = list(config["filters"])
    return config
