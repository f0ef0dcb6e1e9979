"""Which peers count as clients for `server.max_connections_per_client` (a trusted
proxy carries everyone's requests; `*` names no proxy), and how a request head is
measured against `server.max_header_bytes`."""

from __future__ import annotations

import h11
import pytest

from bot.config import ServerConfig
from bot.web.connections import head_bytes, is_proxy, uvicorn_limits


@pytest.mark.parametrize(("host", "trusted", "proxy"), [
    ("172.28.73.10", "172.28.73.10", True),
    ("172.28.73.11", "172.28.73.10", False),
    ("10.1.2.3", "127.0.0.1, 10.0.0.0/8", True),
    ("::1", "127.0.0.1,::1", True),
    ("127.0.0.2", "127.0.0.1,::1", False),
    ("203.0.113.9", "*", False),  # `*` believes every header but names no proxy
    ("203.0.113.9", ["203.0.113.9"], True),
    ("not-an-address", "*", False),
])
def test_a_peer_is_a_proxy_only_when_named(host: str, trusted: str | list[str],
                                           proxy: bool) -> None:
    assert is_proxy(host, trusted) is proxy


def test_a_head_is_measured_as_sent() -> None:
    raw = (b"GET /healthz?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 1000
           + b"\r\n\r\n")
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(raw)
    request = connection.next_event()
    assert isinstance(request, h11.Request)
    assert head_bytes(request) == len(raw)


def test_the_per_client_cap_reaches_the_protocol() -> None:
    limits = uvicorn_limits(ServerConfig(max_connections=300, max_connections_per_client=7,
                                         read_timeout_seconds=4.0))
    protocol = limits["http"]
    assert protocol.per_client == 7 and protocol.read_timeout_seconds == 4.0
    assert limits["limit_concurrency"] == 300
    assert protocol.clients is not uvicorn_limits(ServerConfig())["http"].clients
