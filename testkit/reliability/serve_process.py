"""`prdigest serve` in a subprocess, as an operator runs it."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

from testkit.redis_server import free_port
from testkit.reliability.names import ROOT

START_SECONDS = 150.0
"""How long a start may take: imports and the platforms' first calls are slow on a
machine whose cores are shared."""


class ServeProcess:
    """`prdigest serve` as an operator runs it, on a free port, logging to a file;
    `runner=True` runs it through `testkit.reliability.serve_runner` (short slot locks)."""

    def __init__(self, config: Path, env: Mapping[str, str], log: Path,
                 *, log_level: str = "info", runner: bool = False,
                 open_files: int | None = None) -> None:
        self.config = config
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SLACK_", "TELEGRAM_", "FEISHU_", "GITHUB_",
                                         "REDIS_", "PRDIGEST_"))}
        self.env.update(env)
        self.log = log
        self.log_level = log_level
        self.runner = runner
        self.open_files = open_files  # `ulimit -n` (soft and hard) of the process
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = START_SECONDS) -> ServeProcess:
        handle = self.log.open("ab")
        command = ([sys.executable, "-m", "testkit.reliability.serve_runner"] if self.runner
                   else [sys.executable, "-m", "bot.cli", "serve", "--host", "127.0.0.1"])
        self.process = subprocess.Popen(
            [*command, "--config", str(self.config), "--port", str(self.port),
             "--log-level", self.log_level],
            env=self.env, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT,
            preexec_fn=None if self.open_files is None else self._limit_open_files,
        )
        handle.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"prdigest serve exited with {self.process.returncode}: "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                httpx.get(f"{self.url}/healthz", timeout=2)
                return self
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    self.kill()  # never left running behind a failed start
                    raise
                time.sleep(0.1)

    def _limit_open_files(self) -> None:
        assert self.open_files is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, nothing flushed."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.kill()
