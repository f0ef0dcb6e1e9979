"""Slow clients against a running `prdigest serve`: many connections that send part of
a request head and never finish it (slowloris), while the process's open file
descriptors are counted from /proc. Shared by the reliability tests and
`bench/faults.py`."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from dataclasses import dataclass

PARTIAL_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def open_fds(pid: int) -> int:
    """How many file descriptors the process holds open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


@dataclass(frozen=True)
class SlowOutcome:
    """What the server did with `connections` slow clients."""

    connections: int
    baseline_fds: int
    peak_fds: int
    refused: int
    """Answered 503 (or closed) right away: beyond the connection limit."""
    closed_in_time: int
    """Closed by the server within the wait, the refused ones included."""
    final_fds: int
    seconds: float

    @property
    def held(self) -> int:
        """Descriptors the slow clients held at their peak."""
        return self.peak_fds - self.baseline_fds


def _closed(sock: socket.socket) -> bool:
    """Whether the server has closed (or reset) this non-blocking connection; reads
    what it sent."""
    try:
        while sock.recv(4096):
            pass
    except BlockingIOError:
        return False
    except OSError:
        pass
    return True


def slow_clients(pid: int, port: int, *, connections: int = 300, wait: float = 5.0,
                 settle: float = 0.5) -> SlowOutcome:
    """Open `connections` connections that each send a partial head, one more byte
    after `settle` seconds (a trickle must not buy time), then nothing; count the
    server's descriptors and which connections it closed within `wait` seconds."""
    baseline = open_fds(pid)
    started = time.monotonic()
    socks: list[socket.socket] = []
    try:
        for _ in range(connections):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(PARTIAL_HEAD)
            sock.setblocking(False)
            socks.append(sock)
        time.sleep(settle)
        peak = open_fds(pid)
        first = [_answered_503_or_closed(s) for s in socks]
        for sock, gone in zip(socks, first, strict=True):
            if not gone:
                with contextlib.suppress(OSError):
                    sock.send(b"x")
        closed = list(first)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and not all(closed):
            peak = max(peak, open_fds(pid))
            closed = [c or _closed(s) for c, s in zip(closed, socks, strict=True)]
            time.sleep(0.1)
        seconds = time.monotonic() - started
        final = open_fds(pid)
    finally:
        for sock in socks:
            sock.close()
    return SlowOutcome(connections=connections, baseline_fds=baseline, peak_fds=peak,
                       refused=sum(first), closed_in_time=sum(closed), final_fds=final,
                       seconds=seconds)


def _answered_503_or_closed(sock: socket.socket) -> bool:
    """A connection the server turned away at once: a 503 and then its end."""
    try:
        answer = sock.recv(4096)
    except BlockingIOError:
        return False
    except OSError:
        return True
    return answer == b"" or answer.startswith(b"HTTP/1.1 503")


def head_answer(port: int, size: int) -> bytes:
    """What the server answers a request head of `size` bytes that never ends."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
        try:
            sock.sendall(b"a" * size)
            return sock.recv(4096)
        except TimeoutError:
            return b""
        except OSError:
            return b"closed"
