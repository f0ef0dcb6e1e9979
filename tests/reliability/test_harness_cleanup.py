"""The harness that starts servers for the reliability tests leaves none behind: a
server that does not come up in time, or a redis-server that does not, is killed and
reaped before the error reaches the test, so a slow machine costs one failure, not a
stray process holding a port and a CPU for the rest of the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testkit.processes import stop_all, stop_process
from testkit.reliability import killable_redis
from testkit.reliability.killable_redis import KillableRedis
from testkit.reliability.serve_process import ServeProcess


def test_a_serve_that_misses_its_start_up_limit_is_killed_and_reaped(tmp_path: Path) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text("", encoding="utf-8")
    server = ServeProcess(config, {}, tmp_path / "serve.log")
    # No Python process imports the bot and binds its port in no time at all.
    with pytest.raises(RuntimeError, match="did not answer /healthz within 0 s"):
        server.start(timeout=0)
    assert server.process is not None
    assert server.process.returncode is not None  # reaped, not running nor a zombie


def test_a_redis_that_misses_its_start_up_limit_is_killed_and_its_folder_removed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(killable_redis, "START_SECONDS", -1.0)  # the limit already past
    started: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def recording_popen(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        process: subprocess.Popen[bytes] = popen(*args, **kwargs)  # type: ignore[call-overload]
        started.append(process)
        return process

    monkeypatch.setattr(killable_redis.subprocess, "Popen", recording_popen)
    server = KillableRedis()
    monkeypatch.setattr(killable_redis.redis.Redis, "ping", _refused)
    with pytest.raises(RuntimeError, match="did not start"), server:
        pass
    assert [process.returncode is not None for process in started] == [True]
    assert not Path(server.dir).exists()


def _refused(self: object) -> bool:
    raise killable_redis.redis.ConnectionError("refused")


def test_a_process_that_ignores_the_stop_signal_is_killed_after_its_grace() -> None:
    stubborn = subprocess.Popen([sys.executable, "-c",
                                 "import signal, sys, time\n"
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                 "print('ready', flush=True)\n"
                                 "time.sleep(600)"], stdout=subprocess.PIPE)
    assert stubborn.stdout is not None and stubborn.stdout.readline() == b"ready\n"
    stop_process(stubborn, grace=0.1)
    assert stubborn.returncode == -9  # SIGKILL ended it, and it was reaped


def test_stopping_several_reaps_every_one() -> None:
    sleepers = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
                for _ in range(2)]
    stop_all(sleepers, grace=30)
    assert all(process.returncode is not None for process in sleepers)
