"""A private redis-server that can be SIGKILLed and restarted on its port."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time

import redis

from testkit.redis_server import free_port


class KillableRedis:
    """A private redis-server on one port that can be SIGKILLed and started again there,
    with its append-only file (as docker-compose.yml runs it) so data survives."""

    def __init__(self, *, appendonly: bool = True) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.binary = binary
        self.port = free_port()
        self.appendonly = appendonly
        self.dir = tempfile.mkdtemp(prefix="prdigest-killable-redis-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> KillableRedis:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--dir", self.dir, "--appendonly", "yes" if self.appendonly else "no",
                "--appendfsync", "always"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        try:
            while True:
                try:
                    client.ping()
                    return self
                except redis.ConnectionError:
                    if time.monotonic() > deadline or self.process.poll() is not None:
                        raise RuntimeError("redis-server did not start") from None
                    time.sleep(0.02)
        finally:
            client.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(5)
        self.process = None

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> KillableRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
