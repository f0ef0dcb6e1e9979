"""A private redis-server on a free port, so test runs never touch each other's data."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from testkit.processes import dies_with_parent, stop_process

START_SECONDS = 60.0
"""How long to wait for a new redis-server to answer PING; the wait ends when it does,
so the limit is generous for a loaded machine."""

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def private_redis(*, appendonly: bool = False) -> Iterator[str]:
    """Start redis-server on 127.0.0.1:<free port>; yield its URL; stop it after.

    REDIS_URL in the environment is used instead when no redis-server binary exists.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        url = os.environ.get("REDIS_URL")
        if not url:
            raise RuntimeError(
                "redis-server is not installed and REDIS_URL is not set; "
                "install it (apt-get install redis-server) to run the tests"
            )
        yield url
        return
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="prdigest-redis-")
    args = [
        binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "yes" if appendonly else "no", "--dir", workdir,
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=dies_with_parent())
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        stop_process(proc, grace=5)
        shutil.rmtree(workdir, ignore_errors=True)
