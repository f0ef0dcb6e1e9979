"""The schedule bench leaves no process behind however it ends: stopped by its PID
(SIGTERM), interrupted (an error unwinding it), SIGKILLed - its replica processes and
the redis-servers of its Cluster end with it - and a failover slower than its wait is
reported, not fatal."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit.processes import descendants, running, stop_process

pytestmark = [pytest.mark.slow, pytest.mark.kills, pytest.mark.redis]

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["--channels", "30", "--repos", "3", "--replicas", "3", "--pulls", "4",
         "--no-previous-week"]
START_LIMIT = 240.0
"""Seconds for the bench to start its Cluster and replicas on a loaded machine."""
END_LIMIT = 30.0
"""Seconds every process it started has to be gone once it ended."""


def bench(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "bench.schedule", *SMALL, *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def command_of(pid: int) -> str:
    try:
        return (Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                .decode(errors="replace"))
    except OSError:
        return ""


def started(process: subprocess.Popen[str], replicas: int = 3) -> set[int]:
    """Every process below the bench once its replicas and Redis servers run."""
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[0]
        below = descendants(process.pid)
        commands = [command_of(pid) for pid in below]
        if sum("spawn_main" in c for c in commands) >= replicas and \
                any("redis-server" in c for c in commands):
            return below
        time.sleep(0.2)
    raise AssertionError("the bench did not start its replicas in time")


def gone(pids: set[int]) -> set[int]:
    """Those of `pids` still running `END_LIMIT` seconds on (none, once all ended)."""
    deadline = time.monotonic() + END_LIMIT
    while time.monotonic() < deadline:
        left = {pid for pid in pids if running(pid)}
        if not left:
            return left
        time.sleep(0.2)
    return {pid for pid in pids if running(pid)}


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL],
                         ids=["stopped-by-pid", "interrupted", "sigkilled"])
def test_a_bench_that_ends_early_leaves_no_process_behind(how: signal.Signals) -> None:
    process = bench("--redis", "cluster", "--failover")
    try:
        below = started(process)
        time.sleep(1.0)  # the replicas are at work (or importing: either way)
        process.send_signal(how)
        process.wait(60)
        left = gone(below)
        assert left == set(), [command_of(pid) for pid in left]
        if how is not signal.SIGKILL:
            assert process.returncode != 0  # it says it did not finish
    finally:
        stop_process(process, grace=5)


def test_a_slow_failover_is_reported_and_the_run_goes_on() -> None:
    process = bench("--redis", "cluster", "--failover", "--failover-wait", "0")
    try:
        below = started(process)
        output, _ = process.communicate(timeout=600)
    finally:
        stop_process(process, grace=5)
    assert process.returncode == 0, output
    assert "no replica promoted within" in output and "the run went on" in output
    duplicates = re.search(r"duplicates\s+(\d+)\s", output)
    missing = re.search(r"missing: (\d+)\)", output)
    assert duplicates is not None and missing is not None, output
    assert (int(duplicates[1]), int(missing[1])) == (0, 0), output
    assert gone(below) == set()
