"""Slow clients against a running `prdigest serve`: many connections that send part of
a request head and never finish it (slowloris), while the process's open file
descriptors are counted from /proc, or while another address asks for `/healthz`;
and request heads over the cap. Shared by the reliability tests and `bench/faults.py`."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from dataclasses import dataclass

import httpx

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


def whole_head_answer(port: int, size: int) -> bytes:
    """What the server answers a complete request head of about `size` bytes sent in
    one write (a cap that only bounds an incomplete head lets it through)."""
    head = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * size
            + b"\r\nConnection: close\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        try:
            return sock.recv(4096)
        except OSError:
            return b"closed"


@dataclass
class Flood:
    """Slow connections from one address, each reopened as soon as the server ends it."""

    opened: int = 0
    refused: int = 0
    peak_open: int = 0


def flood_from(source: str, port: int, connections: int, stop: threading.Event,
               flood: Flood) -> None:
    """Hold `connections` slow connections from `source` (a loopback address such as
    127.0.0.2) until `stop`: each sends a partial head, and is reopened when closed."""
    socks: list[socket.socket | None] = [None] * connections
    try:
        while not stop.is_set():
            for index, sock in enumerate(socks):
                if sock is not None and not _closed(sock):
                    continue
                if sock is not None:
                    sock.close()
                    flood.refused += 1
                socks[index] = None
                with contextlib.suppress(OSError):
                    fresh = socket.create_connection(("127.0.0.1", port), timeout=2,
                                                     source_address=(source, 0))
                    fresh.sendall(PARTIAL_HEAD)
                    fresh.setblocking(False)
                    socks[index] = fresh
                    flood.opened += 1
            flood.peak_open = max(flood.peak_open, sum(s is not None for s in socks))
            stop.wait(0.05)
    finally:
        for sock in socks:
            if sock is not None:
                sock.close()


@dataclass(frozen=True)
class FloodOutcome:
    probes: int
    answered: int
    flood: Flood

    @property
    def share(self) -> float:
        return self.answered / self.probes if self.probes else 0.0


def probes_during_flood(port: int, *, connections: int = 600, seconds: float = 20.0,
                        flood_source: str = "127.0.0.2", probe_source: str = "127.0.0.3",
                        every: float = 0.2) -> FloodOutcome:
    """`/healthz` asked from `probe_source` every `every` seconds while `connections`
    slow connections from `flood_source` are held; how many probes got a 200."""
    stop = threading.Event()
    flood = Flood()
    worker = threading.Thread(target=flood_from, args=(flood_source, port, connections, stop,
                                                       flood), daemon=True)
    worker.start()
    probes = answered = 0
    try:
        deadline = time.monotonic() + 3.0
        while flood.peak_open < connections and time.monotonic() < deadline:
            time.sleep(0.1)  # the flood is in place before the first probe
        transport = httpx.HTTPTransport(local_address=probe_source)
        with httpx.Client(transport=transport, timeout=3.0) as client:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                probes += 1
                with contextlib.suppress(httpx.HTTPError):
                    answer = client.get(f"http://127.0.0.1:{port}/healthz",
                                        headers={"Connection": "close"})
                    answered += answer.status_code == 200
                time.sleep(every)
    finally:
        stop.set()
        worker.join(10)
    return FloodOutcome(probes=probes, answered=answered, flood=flood)
