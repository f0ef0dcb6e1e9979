"""Live config: SIGHUP (and `prdigest reload`) make a running `prdigest serve` read its
config file again. A valid file takes effect without a restart - a channel's new
schedule posts its digest, in the same process; an invalid one is refused with one log
line naming the field, and the service runs on with the config it had."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from testkit.reliability.names import ROOT, SLACK_CHANNEL
from testkit.reliability.notice_kills import NEVER_DUE
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.slash import ask_slack, wait_for
from testkit.reliability.world import World, config_text, world


def ask(fakes: World, server: ServeProcess, text: str) -> str:
    return ask_slack(fakes, server.url, text, channel=SLACK_CHANNEL)


def posts(fakes: World) -> list[dict[str, Any]]:
    return [p for p in fakes.slack.posted() if p.get("channel") == SLACK_CHANNEL]


def prdigest(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env)


def test_sighup_reloads_a_valid_file_and_refuses_a_broken_one(
        redis_url: str, tmp_path: Path) -> None:
    with contextlib.ExitStack() as stack:
        fakes = stack.enter_context(world())
        config = tmp_path / "prdigest.toml"
        config.write_text(config_text(fakes.urls(), schedule=NEVER_DUE), encoding="utf-8")
        server = ServeProcess(config, fakes.env(redis_url), tmp_path / "serve.log",
                              runner=True).start()
        stack.callback(server.stop)
        assert server.process is not None
        pid = server.process.pid
        assert "0 9 1 1 *" in ask(fakes, server, "settings")

        # A valid file: the Slack channel's schedule now fired two minutes ago (UTC).
        fired = datetime.now(UTC) - timedelta(minutes=2)
        due = f"{fired.minute} {fired.hour} * * {fired.strftime('%a').upper()}"
        valid = _with_schedule(config_text(fakes.urls(), schedule=NEVER_DUE), due)
        config.write_text(valid, encoding="utf-8")
        os.kill(pid, signal.SIGHUP)
        wait_for(lambda: "config reloaded" in server.log.read_text(errors="replace"), 30)
        assert f"slack:{SLACK_CHANNEL} schedule '0 9 1 1 *' -> '{due}'" in \
            server.log.read_text(errors="replace")
        assert fired.strftime("%H:%M") in ask(fakes, server, "settings")
        wait_for(lambda: posts(fakes), 60)  # the digest, on the new schedule
        assert server.process.poll() is None and server.process.pid == pid

        # A broken file: refused, one line naming the field; the service runs on.
        config.write_text(valid.replace(f'schedule = "{due}"', 'schedule = "every monday"'),
                          encoding="utf-8")
        os.kill(pid, signal.SIGHUP)
        wait_for(lambda: "config reload refused" in server.log.read_text(errors="replace"), 30)
        time.sleep(1)
        log = server.log.read_text(errors="replace")
        refused = [line for line in log.splitlines() if "config reload refused" in line]
        assert len(refused) == 1, refused
        assert "schedule: not a cron expression: 'every monday'" in refused[0]
        assert "Traceback" not in log
        assert server.process.poll() is None
        assert fired.strftime("%H:%M") in ask(fakes, server, "settings")  # the old config

        # `prdigest reload` checks the file first: a broken one is refused here, nothing
        # is signalled; a valid one reloads the server.
        env = {k: v for k, v in os.environ.items() if not k.startswith("REDIS_")}
        broken = prdigest("reload", "--config", str(config), "--pid", str(pid), env=env)
        assert broken.returncode == 2
        assert broken.stderr.strip().count("\n") == 0 and "every monday" in broken.stderr
        config.write_text(_with_schedule(valid, "0 7 * * SUN"), encoding="utf-8")
        reloads = server.log.read_text(errors="replace").count("config reloaded")
        done = prdigest("reload", "--config", str(config), "--pid", str(pid), env=env)
        assert done.returncode == 0, done.stderr
        wait_for(lambda: server.log.read_text(errors="replace").count("config reloaded")
                 > reloads, 30)
        assert "Sundays at 07:00" in ask(fakes, server, "settings")
        assert server.process.poll() is None and server.process.pid == pid


def _with_schedule(text: str, schedule: str) -> str:
    """The config with the Slack channel's schedule set to `schedule`."""
    head, marker, rest = text.partition(f'id = "{SLACK_CHANNEL}"')
    channel, _, tail = rest.partition("[[channels]]")
    lines = [line for line in channel.splitlines() if not line.startswith("schedule =")]
    lines.insert(1, f'schedule = "{schedule}"')
    return head + marker + "\n".join(lines) + "\n[[channels]]" + tail
