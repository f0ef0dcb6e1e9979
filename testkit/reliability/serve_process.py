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

from testkit.processes import kill_process, stop_process
from testkit.redis_server import free_port
from testkit.reliability.names import ROOT

START_SECONDS = 180.0
"""How long `start` waits for /healthz to answer. The wait ends as soon as the server
answers, so the limit only matters when start-up is stuck: it is generous because
several Python processes starting at once on a loaded 2-core machine have taken 80 s."""


class ServeProcess:
    """`prdigest serve` as an operator runs it, on a free port, logging to a file;
    `runner=True` runs it through `testkit.reliability.serve_runner` (short slot locks)."""

    def __init__(self, config: Path, env: Mapping[str, str], log: Path,
                 *, log_level: str = "info", runner: bool = False,
                 open_files: int | None = None, python: str = sys.executable) -> None:
        self.config = config
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SLACK_", "TELEGRAM_", "FEISHU_", "GITHUB_",
                                         "REDIS_", "PRDIGEST_"))}
        self.env.update(env)
        self.log = log
        self.log_level = log_level
        self.runner = runner
        self.open_files = open_files  # `ulimit -n` (soft and hard) of the process
        self.python = python  # another installation's interpreter (a slim install)
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = START_SECONDS) -> ServeProcess:
        """Start it and wait until /healthz answers; on any failure to get there (it
        exited, the wait ran out, an interrupt) it is killed and reaped, then the
        error raised."""
        handle = self.log.open("ab")
        command = ([self.python, "-m", "testkit.reliability.serve_runner"] if self.runner
                   else [self.python, "-m", "bot.cli", "serve", "--host", "127.0.0.1"])
        self.process = subprocess.Popen(
            [*command, "--config", str(self.config), "--port", str(self.port),
             "--log-level", self.log_level],
            env=self.env, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT,
            preexec_fn=None if self.open_files is None else self._limit_open_files,
        )
        handle.close()
        try:
            self._wait_ready(self.process, timeout)
        except BaseException:
            kill_process(self.process)
            raise
        return self

    def _wait_ready(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"prdigest serve exited with {process.returncode}: "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                httpx.get(f"{self.url}/healthz", timeout=2)
                return
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"prdigest serve did not answer /healthz within {timeout:.0f} s: "
                        f"{self.log.read_text(errors='replace')[-2000:]}") from None
                time.sleep(0.1)

    def _limit_open_files(self) -> None:
        assert self.open_files is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, nothing flushed."""
        if self.process is not None:
            kill_process(self.process)

    def stop(self) -> None:
        """SIGINT as an operator's Ctrl-C, SIGKILL if it has not ended in 30 s."""
        if self.process is not None:
            stop_process(self.process, sig=signal.SIGINT, grace=30.0)
