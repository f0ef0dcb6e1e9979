"""Ending the processes a test or benchmark started, on every way out of it.

A helper that starts `prdigest serve` or a redis-server and then fails (a start-up
timeout on a loaded machine, an assertion, an exception) must still leave no process
behind: a stray server keeps its port, its memory and its CPU, and slows every later
test on a shared machine. Each helper here signals, waits, escalates to SIGKILL and
always reaps, so nothing is left running nor as a zombie.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

KILL_WAIT = 30.0
"""Seconds to wait for the kernel to reap a SIGKILLed process (it cannot refuse)."""
_PR_SET_PDEATHSIG = 1


def dies_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that has the kernel SIGKILL the child when the process starting
    it ends, however it ends (SIGKILL included): on Linux, for a child started from the
    main thread (the kernel ties it to the starting thread); None elsewhere."""
    if not sys.platform.startswith("linux") or \
            threading.current_thread() is not threading.main_thread():
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)

    def set_death_signal() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return set_death_signal


def descendants(pid: int) -> set[int]:
    """The processes below `pid` (children, theirs, ...), read from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie, which has ended, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


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
