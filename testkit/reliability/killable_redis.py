"""A private redis-server that can be SIGKILLed and restarted on its port."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time

import redis

from testkit.processes import kill_process
from testkit.redis_server import START_SECONDS, free_port


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
        """Start it and wait until it answers PING; killed and reaped if it does not."""
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--dir", self.dir, "--appendonly", "yes" if self.appendonly else "no",
                "--appendfsync", "always"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + START_SECONDS
        try:
            while True:
                try:
                    client.ping()
                    return self
                except redis.ConnectionError:
                    if time.monotonic() > deadline or self.process.poll() is not None:
                        raise RuntimeError("redis-server did not start") from None
                    time.sleep(0.02)
        except BaseException:
            self.kill()
            raise
        finally:
            client.close()

    def kill(self) -> None:
        if self.process is not None:
            kill_process(self.process)
        self.process = None

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> KillableRedis:
        try:
            return self.start()
        except BaseException:
            self.close()  # its folder too: __exit__ is not called when this raises
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()
