"""The memory of one `prdigest serve` replica, as an operator runs it: Slack only, then
all three platforms (and all three with the optional narrator's `[llm]`), each against
the fake platform APIs on loopback, a private Redis and the example snapshot; then what
importing the heavy SDKs costs a fresh interpreter.

    python -m bench.serve_memory [--settle 3]
    python -m bench.serve_memory --python /tmp/slack-only/bin/python   # a slim install

`--python` runs the server with another installation's interpreter - one made with
`pip install '.[slack]'` has no other platform's SDK, no openai and no Babel - and
measures Slack only, which is all it can serve; it also lists what that installation
cannot import.

Prints per configuration: the resident memory (VmRSS) once `/healthz` answers and the
adapters have started, its peak (VmHWM) and how long until `/healthz` answered.
Targets: Slack only <= 110 MiB, all three <= 200 MiB.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from testkit import EXAMPLES
from testkit.fakes.feishu import FakeFeishu
from testkit.fakes.openai import FakeOpenAI
from testkit.fakes.slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from testkit.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from testkit.fakes.telegram import FakeTelegram
from testkit.redis_server import private_redis
from testkit.reliability.serve_process import ServeProcess

FEISHU_APP = ("cli_bench_app", "bench-app-secret")
TARGETS = {"slack": 110.0, "slack, telegram, feishu": 200.0}
IMPORTS = (("openai", "import openai"), ("lark_oapi (the package)", "import lark_oapi"))


def status_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for {pid}")


def import_cost(statement: str) -> tuple[float, float]:
    """(seconds, MiB of RSS) that `statement` adds to a fresh interpreter."""
    probe = ("import time, resource\n"
             "def rss():\n"
             "    for line in open('/proc/self/status'):\n"
             "        if line.startswith('VmRSS:'): return int(line.split()[1]) / 1024\n"
             "before, started = rss(), time.perf_counter()\n"
             f"{statement}\n"
             "print(time.perf_counter() - started, rss() - before)")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), float(out[1])


def config_text(platforms: tuple[str, ...], urls: dict[str, str], llm: bool) -> str:
    ids = {"slack": "C0123456", "telegram": "-1001234567890", "feishu": "oc_bench00001"}
    lines = ['[repos."acme/lumen"]', 'timezone = "Asia/Shanghai"', ""]
    for platform in platforms:
        lines += ["[[channels]]", f'platform = "{platform}"', f'id = "{ids[platform]}"',
                  'repo = "acme/lumen"', 'schedule = "0 9 * * MON"', ""]
    lines += ["[platforms.slack]", f'api_url = "{urls["slack"]}"', "",
              "[platforms.telegram]", f'api_url = "{urls["telegram"]}"', "",
              "[platforms.feishu]", f'domain = "{urls["feishu"]}"', ""]
    if llm:
        lines += ["[llm]", f'base_url = "{urls["openai"]}"', 'model = "bench-model"', ""]
    return "\n".join(lines)


def environment(platforms: tuple[str, ...], redis_url: str) -> dict[str, str]:
    env = {"REDIS_URL": redis_url, "PRDIGEST_SNAPSHOT": str(EXAMPLES / "snapshot.json"),
           "NO_PROXY": "127.0.0.1,localhost"}
    if "slack" in platforms:
        env.update(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET)
    if "telegram" in platforms:
        env.update(TELEGRAM_BOT_TOKEN=TELEGRAM_TOKEN, TELEGRAM_WEBHOOK_SECRET="bench-secret")
    if "feishu" in platforms:
        env.update(FEISHU_APP_ID=FEISHU_APP[0], FEISHU_APP_SECRET=FEISHU_APP[1],
                   FEISHU_VERIFICATION_TOKEN="bench-token", FEISHU_ENCRYPT_KEY="bench-key")
    return env


def measure(platforms: tuple[str, ...], *, llm: bool, urls: dict[str, str], redis_url: str,
            settle: float, workdir: Path, python: str = sys.executable
            ) -> tuple[float, float, float]:
    """(RSS, peak RSS in MiB, seconds until /healthz answered)."""
    name = "-".join(platforms) + ("-llm" if llm else "")
    config = workdir / f"{name}.toml"
    config.write_text(config_text(platforms, urls, llm), encoding="utf-8")
    server = ServeProcess(config, environment(platforms, redis_url), workdir / f"{name}.log",
                          log_level="warning", python=python)
    started = time.perf_counter()
    server.start(timeout=180)
    ready = time.perf_counter() - started
    try:
        health = httpx.get(f"{server.url}/healthz", timeout=10).json()
        off = [p for p in platforms if not health["platforms"][p].get("configured")]
        if off:
            raise RuntimeError(f"{off} did not start: {health['platforms']}")
        time.sleep(settle)  # the adapters' start-up work in the background
        assert server.process is not None
        pid = server.process.pid
        return status_mib(pid, "VmRSS"), status_mib(pid, "VmHWM"), ready
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--settle", type=float, default=3.0,
                        help="seconds to let the adapters start before reading the memory")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter of the installation to serve with")
    args = parser.parse_args()
    cases = [(("slack",), False), (("slack", "telegram", "feishu"), False),
             (("slack", "telegram", "feishu"), True)]
    if args.python != sys.executable:
        cases = cases[:1]
        absent = subprocess.run(
            [args.python, "-c", "import importlib.util as u; print(' '.join(m for m in "
             "('lark_oapi', 'openai', 'telegram', 'babel', 'httpx') if u.find_spec(m) is None))"],
            check=True, capture_output=True, text=True).stdout.split()
        print(f"installation of {args.python}: not installed: {', '.join(absent) or 'none'}")
    with (private_redis() as redis_url, FakeSlack() as slack, FakeTelegram() as telegram,
          FakeFeishu(app_id=FEISHU_APP[0], app_secret=FEISHU_APP[1]) as feishu,
          FakeOpenAI() as model, tempfile.TemporaryDirectory(prefix="prdigest-rss-") as tmp):
        urls = {"slack": slack.base_url, "telegram": telegram.base_url,
                "feishu": feishu.base_url, "openai": model.base_url}
        rows = [(platforms, llm, *measure(platforms, llm=llm, urls=urls, redis_url=redis_url,
                                          settle=args.settle, workdir=Path(tmp),
                                          python=args.python))
                for platforms, llm in cases]
    print("serve memory bench: one `prdigest serve` replica, the example snapshot, a private "
          "Redis, fake platform APIs")
    for platforms, llm, rss, peak, ready in rows:
        label = ", ".join(platforms)
        target = TARGETS.get(label) if not llm else None
        print(f"  {label + (' + [llm]' if llm else ''):32s} RSS {rss:6.1f} MiB  peak {peak:6.1f}"
              f" MiB  /healthz after {ready:5.1f} s"
              + (f"  (target <= {target:.0f} MiB)" if target else ""))
    for what, statement in IMPORTS if args.python == sys.executable else ():
        seconds, mib = import_cost(statement)
        print(f"  import {what:25s} {seconds:5.2f} s  +{mib:5.1f} MiB  (a fresh interpreter)")


if __name__ == "__main__":
    main()
