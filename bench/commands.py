"""Round trips of `risks for #N` through each chat platform's webhook, beside an echo.

The whole server (`bot.web.app.create_app`: the Slack, Telegram and Feishu adapters'
routes, the command handler, Redis dedupe and the Redis cache) runs under uvicorn in a
child process on 127.0.0.1:<free port>, so it shares no interpreter lock with the load;
the fake Slack, Telegram and Feishu servers and the httpx client run in this process, on
one event loop (no thread handoff per reply).
Every request is signed as its platform signs it - a Slack v0 HMAC slash command whose
`response_url` points at the fake, a Telegram update with its secret-token header, a
Feishu encrypted and signed `im.message.receive_v1` event - and carries ids of its own,
so dedupe never swallows it; a level's requests are signed before its clock starts.
A round trip runs from sending the webhook request to the moment the fake platform
receives the reply to that request (the fakes report each reply as it arrives; nothing
is polled).

PR data: examples/snapshot.json as the upstream behind the real Redis cache
(`CachedSource`, with its in-process tier of fresh PRs in front of Redis), warmed before
measuring; `/metrics` shows that nothing missed either tier during the measured runs and
that every command was answered `ok`.

The ceiling: a bare Starlette route added to the same app, returning the request body,
measured with the same client at the same concurrency (on a small machine the client
itself may be what limits it: see the `bench CPU` column). Concurrency N means N requests
in flight all the time (each client worker sends its next request once the previous
one's reply has arrived). Targets: p99 under 50 ms at 10 concurrent requests; peak
throughput at least half the echo's.

    python -m bench.commands [--requests 1:300,10:1000,100:2000] [--platforms slack,telegram,feishu]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import itertools
import json
import math
import os
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.command_report import _server_stack, report, scrape
from bench.command_server import READY, serve
from bench.command_traffic import (
    Arrivals,
    BenchFeishu,
    BenchSlack,
    BenchTelegram,
    EchoTraffic,
    FeishuTraffic,
    Outbound,
    Secrets,
    SlackTraffic,
    TelegramTraffic,
    Traffic,
)
from testkit.fakes.feishu import FakeFeishu
from testkit.fakes.slack import FakeSlack
from testkit.fakes.telegram import FakeTelegram
from testkit.redis_server import private_redis

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PLATFORMS = ("slack", "telegram", "feishu")
DEFAULT_LEVELS = "1:300,10:1000,100:2000"
REPLY_TIMEOUT_SECONDS = 20.0
# Settings of the host that must not reach the child: proxies, real platform secrets.
_DROPPED_ENV = (
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
    "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "TELEGRAM_BOT_TOKEN",
    "TELEGRAM_WEBHOOK_SECRET", "FEISHU_APP_ID", "FEISHU_APP_SECRET",
    "FEISHU_VERIFICATION_TOKEN", "FEISHU_ENCRYPT_KEY", "GITHUB_TOKEN",
    "GITHUB_WEBHOOK_SECRET", "REDIS_URL", "PRDIGEST_REPORT_SECRET",
)


# --- the server under test (child process) -------------------------------------------------


# --- measuring -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    round_trip: float
    ack: float


@dataclass
class Level:
    """One platform at one concurrency."""

    platform: str
    concurrency: int
    samples: list[Sample]
    errors: Counter[str]
    wall: float
    app_cpu: float
    loop_cpu: float
    bench_cpu: float

    @property
    def ok(self) -> int:
        return len(self.samples)

    @property
    def throughput(self) -> float:
        return self.ok / self.wall if self.wall > 0 else 0.0

    def percentile(self, fraction: float, *, ack: bool = False) -> float:
        """Nearest-rank percentile in milliseconds."""
        values = sorted(s.ack if ack else s.round_trip for s in self.samples)
        if not values:
            return math.nan
        return values[max(0, math.ceil(fraction * len(values)) - 1)] * 1000


class Runner:
    """Sends requests and times them to their replies.

    Each concurrent worker has an httpx client (one keep-alive connection) of its own,
    as each platform's sender would: one client shared by 100 workers spends more CPU
    in its connection pool than the echo route does in the server.
    """

    def __init__(self, clients: Sequence[httpx.AsyncClient], arrivals: Arrivals,
                 app_pid: int) -> None:
        self.clients = clients
        self.arrivals = arrivals
        self.app_pid = app_pid
        self.ids = itertools.count(1)

    def prepare(self, traffic: Traffic, number: int) -> Outbound:
        """A request, signed (and for Feishu encrypted) as its platform would send it."""
        return traffic.request(next(self.ids), number)

    async def exchange(self, traffic: Traffic, outbound: Outbound,
                       client: httpx.AsyncClient | None = None) -> Sample | str:
        """One request; its sample, or why it failed."""
        client = client or self.clients[0]
        waiter = self.arrivals.expect(outbound.key) if outbound.key else None
        start = time.perf_counter()
        try:
            response = await client.post(traffic.path, content=outbound.body,
                                         headers=outbound.headers)
        except httpx.HTTPError as exc:
            return self._failed(outbound, type(exc).__name__)
        acked = time.perf_counter()
        if response.status_code != 200:
            return self._failed(outbound, f"HTTP {response.status_code}")
        if waiter is None:
            if response.content != outbound.body:
                return "echo differs"
            return Sample(round_trip=acked - start, ack=acked - start)
        try:
            arrived = await asyncio.wait_for(waiter, REPLY_TIMEOUT_SECONDS)
        except TimeoutError:
            return self._failed(outbound, "no reply in time")
        return Sample(round_trip=arrived - start, ack=acked - start)

    def _failed(self, outbound: Outbound, reason: str) -> str:
        if outbound.key:
            self.arrivals.forget(outbound.key)
        return reason

    async def level(self, traffic: Traffic, numbers: Sequence[int], concurrency: int,
                    total: int) -> Level:
        """`total` requests, `concurrency` of them in flight at any time. The requests
        are signed before the clock starts, as a platform's sender has its own CPUs."""
        samples: list[Sample] = []
        errors: Counter[str] = Counter()
        sent = itertools.count()
        outbounds = [self.prepare(traffic, numbers[index % len(numbers)])
                     for index in range(total)]

        async def worker(client: httpx.AsyncClient) -> None:
            while (index := next(sent)) < total:
                result = await self.exchange(traffic, outbounds[index], client)
                if isinstance(result, Sample):
                    samples.append(result)
                else:
                    errors[result] += 1

        app_before, loop_before = self.cpu_seconds(), self.cpu_seconds(main_thread=True)
        bench_before = time.process_time()
        start = time.perf_counter()
        await asyncio.gather(*(worker(self.clients[i]) for i in range(concurrency)))
        wall = time.perf_counter() - start
        return Level(traffic.name, concurrency, samples, errors, wall,
                     app_cpu=self.cpu_seconds() - app_before,
                     loop_cpu=self.cpu_seconds(main_thread=True) - loop_before,
                     bench_cpu=time.process_time() - bench_before)

    def cpu_seconds(self, *, main_thread: bool = False) -> float:
        """CPU seconds (user + system) the server process has used, all threads, or
        only its main thread: the one running the event loop."""
        path = (f"/proc/{self.app_pid}/task/{self.app_pid}/stat" if main_thread
                else f"/proc/{self.app_pid}/stat")
        fields = Path(path).read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the run -------------------------------------------------------------------------------


@contextmanager
def app_server(redis_url: str, slack: FakeSlack, telegram: FakeTelegram, feishu: FakeFeishu,
               keys: Secrets, log: Path, profile: str | None = None
               ) -> Iterator[tuple[int, int, str]]:
    """The server in a child process; yields (port, pid, the class of its event loop).
    Stopped with SIGTERM, which uvicorn turns into a graceful shutdown (the lifespan
    closes the adapters)."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(keys.environment())
    env.update({"NO_PROXY": "127.0.0.1,localhost", "PTB_TIMEDELTA": "true",
                "PYTHONPATH": str(ROOT)})
    command = [sys.executable, "-m", "bench.commands", "--serve",
               "--redis-url", redis_url, "--slack-api", slack.base_url,
               "--telegram-api", telegram.base_url, "--feishu-domain", feishu.base_url]
    if profile:
        command += ["--profile", str(Path(profile).resolve())]
    with log.open("w") as errors:
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=errors, text=True)
    try:
        port, loop = _wait_ready(child, log)
        yield port, child.pid, loop
    finally:
        child.terminate()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _wait_ready(child: subprocess.Popen[str], log: Path, timeout: float = 60.0
                ) -> tuple[int, str]:
    """The child's port and the class of the event loop it runs."""
    assert child.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([child.stdout], [], [], 0.2)
        if ready:
            line = child.stdout.readline()
            if line.startswith(READY):
                _, port, loop = line.split()
                return int(port), loop
            if not line and child.poll() is not None:
                break
    raise RuntimeError(f"the server did not start; its log:\n{log.read_text()[-3000:]}")


def pull_numbers() -> list[int]:
    data = json.loads((EXAMPLES / "snapshot.json").read_text())
    return sorted(int(pull["number"]) for pull in data["pulls"])


def parse_levels(text: str) -> list[tuple[int, int]]:
    """`1:300,10:1000` -> [(1, 300), (10, 1000)]: concurrency and requests."""
    levels = []
    for part in text.split(","):
        concurrency, _, total = part.partition(":")
        levels.append((int(concurrency), int(total)))
    return levels


async def measure(args: argparse.Namespace, redis_url: str, log: Path) -> int:
    loop = asyncio.get_running_loop()
    arrivals = Arrivals(loop)
    keys = Secrets()
    levels = parse_levels(args.requests)
    platforms = [p for p in args.platforms.split(",") if p]
    numbers = pull_numbers()
    async with AsyncExitStack() as stack:
        # The fakes run in this loop; the server child is started and stopped from a
        # worker thread, since both wait on it while it talks to the fakes.
        slack = await stack.enter_async_context(
            BenchSlack(arrivals, bot_token=keys.slack_bot_token).running_here())
        telegram = await stack.enter_async_context(
            BenchTelegram(arrivals, keys.telegram_token).running_here())
        feishu_fake = BenchFeishu(app_id=keys.feishu_app_id, app_secret=keys.feishu_app_secret)
        feishu_fake.arrivals = arrivals
        feishu = await stack.enter_async_context(feishu_fake.running_here())
        server = ExitStack()
        port, pid, server_loop = await asyncio.to_thread(
            server.enter_context,
            app_server(redis_url, slack, telegram, feishu, keys, log, args.profile))
        stack.push_async_callback(asyncio.to_thread, server.close)
        traffic: dict[str, Traffic] = {
            "slack": SlackTraffic(slack, keys),
            "telegram": TelegramTraffic(telegram, keys),
            "feishu": FeishuTraffic(feishu, keys),
        }
        traffic["echo"] = EchoTraffic(traffic["slack"].request(0, numbers[0]))
        pool = [await stack.enter_async_context(
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", trust_env=False,
                              timeout=30.0))
            for _ in range(max(c for c, _ in levels))]
        client = pool[0]
        runner = Runner(pool, arrivals, pid)
        print(f"server pid {pid} on 127.0.0.1:{port} ({server_loop}); "
              f"PRs #{numbers[0]}..#{numbers[-1]} ({len(numbers)}) asked in turn; "
              "warming up ...", flush=True)
        await warm_up(runner, [traffic[p] for p in (*platforms, "echo")], numbers)
        # This process holds the SDKs the fakes use: a full collection here would stall
        # the client and fakes ~0.3 s and be counted against the server.
        gc.collect()
        gc.freeze()
        before = scrape((await client.get("/metrics")).text)
        results: list[Level] = []
        for name in ("echo", *platforms):
            for concurrency, total in levels:
                level = await runner.level(traffic[name], numbers, concurrency, total)
                results.append(level)
                print(f"  {name:<8} c={concurrency:<3} {level.ok} ok in "
                      f"{level.wall:.1f} s", flush=True)
        after = scrape((await client.get("/metrics")).text)
        replies = last_replies(slack, telegram, feishu)
    return report(results, platforms, before, after, arrivals, log, replies)


def last_replies(slack: FakeSlack, telegram: FakeTelegram, feishu: FakeFeishu
                 ) -> dict[str, tuple[int, str]]:
    """The last reply each fake received: its size in bytes and the start of its text."""
    found: dict[str, tuple[int, str]] = {}
    answers = [r for r in slack.calls("response") if r.ok]
    if answers:
        found["slack"] = (len(answers[-1].body), str(answers[-1].json.get("text", "")))
    sent = telegram.calls("sendMessage")
    if sent:
        found["telegram"] = (len(sent[-1].body), sent[-1].fields.get("text", ""))
    with feishu._lock:
        accepted = feishu.accepted[-1:]
    if accepted:
        card = json.loads(accepted[0].json()["content"])
        texts = [e.get("content", "") for e in card["body"]["elements"]
                 if e.get("tag") == "markdown"]
        found["feishu"] = (len(accepted[0].body), " ".join(texts))
    return found


async def warm_up(runner: Runner, traffic: Sequence[Traffic], numbers: Sequence[int]) -> None:
    """Every PR once through every platform (fills the cache, opens each adapter's
    clients, fetches tokens and bot identities), then a short concurrent burst each."""
    for each in traffic:
        for number in numbers:
            result = await runner.exchange(each, runner.prepare(each, number))
            if not isinstance(result, Sample):
                raise RuntimeError(f"warm-up: {each.name} #{number}: {result}")
        burst = await runner.level(each, numbers, len(runner.clients),
                                   2 * len(runner.clients))
        if burst.errors:
            raise RuntimeError(f"warm-up: {each.name}: {dict(burst.errors)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", default=DEFAULT_LEVELS,
                        help="concurrency:requests pairs, comma-separated")
    parser.add_argument("--platforms", default=",".join(PLATFORMS))
    parser.add_argument("--profile", metavar="PATH",
                        help="run the server's event loop under cProfile and write the "
                             "stats to PATH (slows it down; for finding hot spots)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)
    parser.add_argument("--slack-api", help=argparse.SUPPRESS)
    parser.add_argument("--telegram-api", help=argparse.SUPPRESS)
    parser.add_argument("--feishu-domain", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.redis_url, args.slack_api, args.telegram_api, args.feishu_domain,
              args.profile)
        return
    if importlib.util.find_spec("sniffio") is None:
        # httpcore imports sniffio on every lock it makes (4 per request) and falls back
        # to asyncio when it is missing; a missing module is searched for on sys.path
        # each time (~65 us). Marking it absent makes that import fail at once - in
        # the client only: the server is measured as it is.
        sys.modules["sniffio"] = None  # type: ignore[assignment]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):
        os.environ.pop(name, None)
    with private_redis() as redis_url, tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "server.log"
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; "
              f"uvicorn ({_server_stack()}) in a child process; fakes + httpx client in "
              f"this one; private redis-server. Load average before: "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        code = asyncio.run(measure(args, redis_url, log))
        print(f"Load average after: {os.getloadavg()[0]:.2f} (this run adds about 1.5; more "
              "means other work shared the CPUs and the figures are pessimistic)")
    raise SystemExit(code)


if __name__ == "__main__":
    main()
