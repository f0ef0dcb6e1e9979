"""Hostile uploads against a running `prdigest serve`: large unsigned bodies, declared
or chunked, sent in parallel over raw sockets, while the process's resident memory is
sampled from /proc. Shared by the reliability tests and `bench/faults.py`."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

POST_ROUTES = ("/slack/events", "/telegram/webhook", "/feishu/events", "/github/webhook")
_PIECE = b"{" * (64 * 1024)


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """A memory figure of a live process from /proc/PID/status, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise LookupError(f"{field} not in /proc/{pid}/status")


@dataclass(frozen=True)
class UploadOutcome:
    """How the uploads were answered, and what the server's memory did meanwhile."""

    statuses: tuple[str, ...]
    sent_bytes: int
    baseline_kib: int
    peak_kib: int
    seconds: float

    @property
    def growth_mib(self) -> float:
        return (self.peak_kib - self.baseline_kib) / 1024


def upload(port: int, path: str, size: int, *, chunked: bool) -> tuple[str, int]:
    """One unsigned POST of `size` bytes; (the status the server answered, or "closed"
    when it hung up without one; the bytes sent before it did)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Content-Type: application/json\r\n{framing}\r\n\r\n".encode())
    sent = 0
    answer = b""
    # A declared length can be judged from the headers: give the server a moment to.
    wait = 0.0 if chunked else 1.0
    try:
        while sent < size:
            readable, _, _ = select.select([sock], [], [], wait)
            wait = 0.0
            if readable:  # the server answered before the body was complete
                break
            sock.sendall(b"%x\r\n%s\r\n" % (len(_PIECE), _PIECE) if chunked else _PIECE)
            sent += len(_PIECE)
        else:
            if chunked:
                sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the server closed the connection on the rest of the body
    try:
        answer = sock.recv(4096)
    except OSError:
        pass  # reset before its answer could be read
    finally:
        sock.close()
    status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/") else "closed"
    return status, sent


def hostile_uploads(pid: int, port: int, *, size: int = 48 << 20, parallel: int = 8,
                    routes: Sequence[str] = POST_ROUTES) -> UploadOutcome:
    """`parallel` uploads of `size` bytes at once, spread over `routes`, half declared
    and half chunked, while the server's VmRSS is sampled every few milliseconds."""
    baseline = rss_kib(pid)
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                peak[0] = max(peak[0], rss_kib(pid))
            except (OSError, LookupError):
                return
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(parallel) as pool:
            results = list(pool.map(
                lambda i: upload(port, routes[i % len(routes)], size, chunked=i % 2 == 1),
                range(parallel)))
    finally:
        done.set()
        sampler.join()
    seconds = time.monotonic() - started
    return UploadOutcome(statuses=tuple(status for status, _ in results),
                         sent_bytes=sum(sent for _, sent in results),
                         baseline_kib=baseline, peak_kib=max(peak[0], rss_kib(pid)),
                         seconds=seconds)
