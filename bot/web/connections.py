"""What one client connection may hold of `prdigest serve`, and for how long.

uvicorn bounds idle time between requests (`timeout_keep_alive`), the size of a request
head while it is incomplete (`h11_max_incomplete_event_size`, h11 only - httptools has
no such cap) and answers 503 beyond `limit_concurrency`; it has no deadline for
receiving a request, so a client sending a head byte by byte (or nothing at all) holds
its socket for ever, the concurrency limit only turns away requests, never
connections, and a head that arrives whole in one read is taken at any size.
`GuardedH11Protocol` adds: a request not fully received within the read timeout closes
its connection; a connection beyond the limit, or beyond the per-client limit of its
address, is answered 503 and closed at once; a head over the cap is refused (400)
however it arrived.

The per-client limit counts connections by the address they come from. A reverse
proxy's connections carry many clients (`FORWARDED_ALLOW_IPS` names the proxies whose
`X-Forwarded-For` is believed): they count toward the overall limit only, and the
proxy, which reads each head before it forwards it, is where a client's connections
are limited. `*` there names no proxy: every address is then capped as a client.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections import Counter
from functools import lru_cache
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ServerConfig

log = logging.getLogger(__name__)



def _refusal(text: bytes) -> bytes:
    return (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(text), text))


_REFUSAL = _refusal(b"Too many connections")
_CLIENT_REFUSAL = _refusal(b"Too many connections from your address")
_RECEIVING = (h11.IDLE, h11.SEND_BODY)
"""The client's states while its request is not fully received yet."""


class _Tally:
    """Counts closed connections and logs them at most once per `every` seconds of
    `clock`, so a flood of slow clients writes a line, not one line each (uvicorn makes
    the protocols, so the process's clock, `SYSTEM_CLOCK`, is theirs)."""

    def __init__(self, what: str, every: float = 10.0, clock: Clock = SYSTEM_CLOCK) -> None:
        self.what = what
        self.every = every
        self.clock = clock
        self.count = 0
        self._unlogged = 0
        self._logged_at = -every

    def add(self) -> None:
        self.count += 1
        self._unlogged += 1
        now = self.clock.monotonic()
        if now - self._logged_at >= self.every:
            log.warning("%d %s", self._unlogged, self.what)
            self._unlogged = 0
            self._logged_at = now


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def proxy_networks(trusted: str) -> tuple[Network, ...]:
    """The addresses `FORWARDED_ALLOW_IPS` names (comma-separated addresses and networks,
    as uvicorn reads it); `*` and names that are not addresses name no proxy here."""
    networks = []
    for item in trusted.split(","):
        try:
            networks.append(ipaddress.ip_network(item.strip(), strict=False))
        except ValueError:
            continue
    return tuple(networks)


def is_proxy(host: str, trusted: str | list[str]) -> bool:
    """Whether a connection from `host` comes from a trusted reverse proxy."""
    listed = trusted if isinstance(trusted, str) else ",".join(trusted)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in proxy_networks(listed))


def head_bytes(request: h11.Request) -> int:
    """The size of a request head as sent: request line, headers, blank line."""
    line = len(request.method) + len(request.target) + len(request.http_version) + 9
    return line + sum(len(name) + len(value) + 4 for name, value in
                      request.headers.raw_items()) + 2


class _CappedHead(h11.Connection):
    """h11's connection, refusing a request head over `max_head` bytes even when it
    arrived whole (h11's own cap bounds only a head still incomplete)."""

    def __init__(self, max_head: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_head)
        self.max_head = max_head

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request) and head_bytes(event) > self.max_head:
            raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        return event


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request read deadline, a hard connection cap
    (`limit_concurrency`), a cap per client address and a head cap that holds however
    the head arrives. Built by `guarded_protocol` with its limits."""

    read_timeout_seconds: ClassVar[float] = 15.0
    per_client: ClassVar[int | None] = None
    clients: ClassVar[Counter[str]] = Counter()
    timed_out: ClassVar[_Tally] = _Tally("connection(s) closed: request not received "
                                         "within the read timeout")
    refused: ClassVar[_Tally] = _Tally("connection(s) refused: server.max_connections "
                                       "reached")
    refused_client: ClassVar[_Tally] = _Tally(
        "connection(s) refused: server.max_connections_per_client reached by an address")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._counted: str | None = None
        if self.config.h11_max_incomplete_event_size is not None:
            self.conn = _CappedHead(self.config.h11_max_incomplete_event_size)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        limit = self.limit_concurrency
        if limit is not None and len(self.connections) > limit:
            self._refuse(self.refused, _REFUSAL)
            return
        host = self.client[0] if self.client else None
        if self.per_client is not None and host is not None and \
                not is_proxy(host, self.config.forwarded_allow_ips):
            if self.clients[host] >= self.per_client:
                self._refuse(self.refused_client, _CLIENT_REFUSAL)
                return
            self.clients[host] += 1
            self._counted = host
        self._watch()

    def _refuse(self, tally: _Tally, answer: bytes) -> None:
        tally.add()
        self.transport.write(answer)
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()  # a kept-alive connection has the same time for its next request

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted is not None:
            self.clients[self._counted] -= 1
            if self.clients[self._counted] <= 0:
                del self.clients[self._counted]
            self._counted = None
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Start the deadline when a request is awaited (never restart it: a byte now and
        then must not keep a connection); stop it once the request is in."""
        if self.conn.their_state not in _RECEIVING or self.transport.is_closing():
            self._disarm()
        elif self._deadline is None:
            # Real time on uvicorn's loop: it bounds a real socket's reads.
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


def guarded_protocol(read_timeout_seconds: float, per_client: int | None = None
                     ) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn is given (`http=`), with this read timeout and this
    many connections per client address; its own count of each address's connections."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"read_timeout_seconds": read_timeout_seconds, "per_client": per_client,
                 "clients": Counter()})


def uvicorn_limits(server: ServerConfig) -> dict[str, Any]:
    """`uvicorn.run` keyword arguments for the `[server]` connection limits."""
    return {
        "http": guarded_protocol(server.read_timeout_seconds,
                                 server.max_connections_per_client),
        "ws": "none",  # nothing here speaks WebSocket: no upgrade to another parser
        "timeout_keep_alive": server.keep_alive_seconds,
        "limit_concurrency": server.max_connections,
        "h11_max_incomplete_event_size": server.max_header_bytes,
    }
