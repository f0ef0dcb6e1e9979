"""Ending the processes a test or benchmark started, on every way out of it.

A helper that starts `prdigest serve` or a redis-server and then fails (a start-up
timeout on a loaded machine, an assertion, an exception) must still leave no process
behind: a stray server keeps its port, its memory and its CPU, and slows every later
test on a shared machine. Each helper here signals, waits, escalates to SIGKILL and
always reaps, so nothing is left running nor as a zombie.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from typing import Any

KILL_WAIT = 30.0
"""Seconds to wait for the kernel to reap a SIGKILLed process (it cannot refuse)."""


def kill_process(process: subprocess.Popen[Any]) -> None:
    """SIGKILL `process` if it still runs, and reap it."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait(KILL_WAIT)


def stop_process(process: subprocess.Popen[Any], *, sig: int = signal.SIGTERM,
                 grace: float = 30.0) -> None:
    """Ask `process` to stop with `sig`; SIGKILL it after `grace` seconds; reap it."""
    if process.poll() is None:
        process.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(grace)
    kill_process(process)


def stop_all(processes: list[subprocess.Popen[Any]], *, grace: float = 5.0) -> None:
    """Stop every process at once (SIGTERM to all first, so their graces overlap)."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        stop_process(process, grace=grace)
