"""The weekly schedule at scale: many channels due in the same minute, several replicas.

Starts a private redis-server, the fake GitHub (GraphQL) with a week of PRs per
repository, and the fake Slack, Telegram and Feishu servers, all on 127.0.0.1. Then
3 replica processes each run a `Scheduler` with the real adapters and the cached
GitHub source, and tick at the same due minute until the ledger holds every channel.
Prints: time until all are posted, posts per second, duplicates (messages a platform
received that the ledger does not account for; target 0), GitHub week fetches
(target: one per repository, plus one for the week before when trends are on),
digest builds, and peak memory (RSS) per replica.

    python -m bench.schedule [--channels 1000] [--repos 50] [--replicas 3]
                             [--kill]  # SIGKILL one replica a third of the way in
                             [--redis single|cluster|sentinel]  # which Redis topology
                             [--failover]  # SIGKILL a master a third of the way in
                             [--runs N]  # the whole bench N times, a summary line each
                             [--log-dir DIR]  # each replica's warnings in a file
                             [--platform-rate 5]  # the fakes refuse posts beyond 5/s each
                             [--line-seconds S]  # how long a post may wait in line (0: none)

With --kill, the killed replica's posts in flight are left in doubt and re-sent by
the others once its locks expire (--lock-seconds): on Slack and Telegram a re-sent
post that had already arrived is a duplicate - the window `bot.delivery.schedule` documents.
The fake servers also print the killed replica's reset connections.

However the bench ends - its figures printed, an error, Ctrl-C, SIGTERM, even SIGKILL
of its own PID - it leaves no process behind: the replicas end with it (each watches
its parent), and so do the redis-servers it started (the kernel ends them with it). A
failover slower than the wait for it is reported, and the run goes on.

With --platform-rate N each fake platform takes N posts a second across its chats (a
bucket holding a burst of N, and at least 2: the bots post at exactly N a second, and a
bucket of one token would refuse every message that reaches it a moment early on a
loaded machine) and answers 429 (with its Retry-After) beyond, and each platform's
`post_rate` is set to N/s: the bench then prints the 429 answers, the attempts marked
failed, the longest a message waited for its turn - past the pacing horizon
(`bot.pacing.MAX_TURN_WAIT`) a post waits in line for it, for up to --line-seconds
(0: it fails into the back-off instead, as before the line) - and the wall time against
the least the rate allows (the messages of the busiest platform / N).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import resource
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from queue import Empty
from typing import Any

from bot.clock import SystemClock
from bot.delivery.schedule import POST_LINE_SECONDS
from bot.pacing import MAX_TURN_WAIT
from bot.store.keys import Keys
from bot.store.redis.client import REDIS_ERRORS

WEEK = "2026-W29"
PREVIOUS = "2026-W28"
# Monday 2026-07-20 09:00 in Shanghai and Singapore, 10:00 in Tokyo: one minute in UTC.
DUE = datetime(2026, 7, 20, 1, 0, 5, tzinfo=UTC)
ZONES = (("Asia/Shanghai", "0 9 * * MON"), ("Asia/Tokyo", "0 10 * * MON"),
         ("Asia/Singapore", "0 9 * * MON"))
PLATFORMS = ("slack", "telegram", "feishu")
TOPIC_SETS = ((), ("npu",), ("npu", "ckpt"))
GITHUB_TOKEN = "ghp_fake_token"
FETCHES_KEY = "bench:github-week-fetches"
FEISHU_APP = ("cli_bench_app", "bench-app-secret")


def channel_id(platform: str, index: int) -> str:
    if platform == "telegram":
        return str(-1001000000000 - index)
    if platform == "feishu":
        return f"oc_bench{index:05d}"
    return f"CBENCH{index:05d}"


def write_config(path: Path, *, channels: int, repos: int, urls: dict[str, str],
                 platform_rate: int | None = None) -> None:
    lines = []
    for r in range(repos):
        lines += [f'[repos."bench/repo{r:03d}"]', 'timezone = "Asia/Shanghai"',
                  f'[repos."bench/repo{r:03d}".topics]',
                  'npu = { keywords = ["npu", "ascend"], paths = ["**/npu/**"] }', ""]
    for index in range(channels):
        platform = PLATFORMS[index % 3]
        tz, cron = ZONES[(index // 3) % 3]
        topics = TOPIC_SETS[(index // 9) % 3]
        lines += ["[[channels]]", f'platform = "{platform}"',
                  f'id = "{channel_id(platform, index)}"',
                  f'repo = "bench/repo{index % repos:03d}"',
                  f'lang = "{("zh", "en")[(index // 2) % 2]}"', f'schedule = "{cron}"',
                  f'timezone = "{tz}"', f"topics = {list(topics)!r}".replace("'", '"'), ""]
    # With a platform rate the bots pace themselves at the fakes' rate.
    rate = [f'post_rate = "{platform_rate}/s"'] if platform_rate else []
    lines += ["[github]", f'api_url = "{urls["github"]}"', "",
              "[platforms.slack]", f'api_url = "{urls["slack"]}"', *rate, "",
              "[platforms.telegram]", f'api_url = "{urls["telegram"]}"', *rate, "",
              "[platforms.feishu]", f'domain = "{urls["feishu"]}"', *rate, ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def replica_main(number: int, config_path: str, redis_url: str, env: dict[str, str],
                 options: dict[str, Any], go: Any, reports: Any) -> None:
    """One replica: build what the server builds, wait for the start, tick until done."""
    end_with_parent()
    os.environ.update(env)
    asyncio.run(_replica(number, Path(config_path), redis_url, options, go, reports))


def end_with_parent() -> None:
    """End this process when the one that started it ends, however that ends (an
    error, a signal, SIGKILL): a thread waits on the parent's sentinel and exits."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(3)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def stop_replicas(processes: Sequence[Any]) -> None:
    """Stop every replica still running and reap it (SIGTERM, then SIGKILL)."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join(10)


def exit_on_sigterm() -> None:
    """SIGTERM (`kill PID`) unwinds the bench like an error: its replicas, servers and
    files are let go of on the way out."""
    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


async def _replica(number: int, config_path: Path, redis_url: str, options: dict[str, Any],
                   go: Any, reports: Any) -> None:
    import logging

    from adapters.poster import AdapterPoster
    from bot.compose import outbound_adapter
    from bot.config import load_config
    from bot.delivery.due import due_runs
    from bot.delivery.schedule import Scheduler, ScheduleSettings
    from bot.digests import Digests
    from bot.github.source import GitHubSource
    from bot.store.cache import CachedSource
    from bot.store.coordination import StoreUnavailable
    from bot.store.pacing import SharedPacer
    from bot.store.redis.cache import Cache
    from bot.store.redis.client import sync_client
    from bot.store.redis.coordination import RedisCoordination

    log_dir = options.get("log_dir")
    if log_dir:  # what went wrong in this replica, for a run that shows something odd
        logging.basicConfig(level=logging.WARNING, filename=f"{log_dir}/replica-{number}.log",
                            format="%(asctime)s %(name)s %(levelname)s %(message)s")
    else:
        logging.basicConfig(level=logging.CRITICAL)

    counter = sync_client(redis_url)

    class CountingGitHub(GitHubSource):
        """Counts, in Redis so a killed replica's count survives, the week fetches that
        reach GitHub (the cache answers the rest)."""

        def fetch_week(self, repo: str, week: str) -> Any:
            counter.hincrby(FETCHES_KEY, week, 1)
            return super().fetch_week(repo, week)

    config = load_config(config_path)
    github = CountingGitHub(config)
    source = CachedSource(github, Cache.from_url(redis_url), config)
    digests = Digests(config, source)
    port = RedisCoordination.from_url(redis_url)
    clock = BenchClock()

    class TimedPacer(SharedPacer):
        """Measures how long a message waited for its turn (in line included)."""

        longest = 0.0

        async def take_turn(self, lanes: Any, *, max_wait: float) -> None:
            asked = time.perf_counter()
            try:
                await super().take_turn(lanes, max_wait=max_wait)
            finally:
                self.longest = max(self.longest, time.perf_counter() - asked)

    # Posts take their turns in the lanes the replicas share, as the server's do.
    pacer = TimedPacer(port, clock=clock)
    adapters = {p: outbound_adapter(digests, p, pacer=pacer) for p in PLATFORMS}
    scheduler = Scheduler(digests, port, AdapterPoster(adapters),
                          ScheduleSettings(replica=f"r{number}",
                                           lock_seconds=options["lock_seconds"],
                                           build_lock_seconds=options["lock_seconds"],
                                           concurrency=options["concurrency"],
                                           previous_week=options["previous_week"],
                                           line_seconds=options["line_seconds"]), clock=clock)
    slots = [run.slot for run in due_runs(config.channels, DUE, scheduler.catch_up)]
    reports.put(("ready", number, rss_mib()))
    await asyncio.to_thread(go.wait)
    cpu_at_start = cpu_seconds()
    started = time.perf_counter()
    while True:
        try:
            await scheduler.tick()
            entries = await scheduler.ledger.get_many(slots)
            if all(e is not None and e.state == "posted" for e in entries):
                break
        except StoreUnavailable:  # a failover: the next pass goes on, as run_forever's does
            pass
        await asyncio.sleep(0.2)
    elapsed = time.perf_counter() - started
    stats = scheduler.stats
    reports.put(("done", number, {
        "posted": stats.posted, "failed": stats.failed, "resent_in_doubt": stats.resent_in_doubt,
        "builds": stats.digest_builds, "longest_turn_wait": pacer.longest,
        "seconds": elapsed, "rss_mib": rss_mib(), "cpu_seconds": cpu_seconds() - cpu_at_start}))
    for adapter in adapters.values():
        close = getattr(adapter, "close", None)
        if close is not None:
            await close()
    await port.close()


FAILOVER_WAIT_SECONDS = 60.0
"""How long the bench waits to see a replica promoted before it reports the failover as
slow and goes on (the replicas keep retrying through it)."""

CLOCK_SPEED = 60.0
"""The replicas' clock starts at the due minute and runs this much faster than real time:
a post that failed (a fake server timing out on a loaded machine) has its one-minute
back-off pass in a second instead of never - a frozen clock would wait for ever -
while every run stays well inside the catch-up window."""


class BenchClock(SystemClock):
    """The machine's clock, its date starting at the due minute and running
    `CLOCK_SPEED` times faster; its waits pass in real time."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def now(self) -> datetime:
        return DUE + timedelta_hours((time.monotonic() - self.started) * CLOCK_SPEED / 3600)


def received_per_channel(slack: Any, telegram: Any, feishu: Any) -> tuple[Counter[str],
                                                                            Counter[str]]:
    """Messages each channel received, and Feishu cards whose uuid was already seen
    (real Feishu drops those; the fake keeps them)."""
    counts: Counter[str] = Counter()
    for message in slack.posted():
        counts[f"slack:{message['channel']}"] += 1
    for fields in telegram.sent():
        counts[f"telegram:{fields['chat_id']}"] += 1
    seen: set[tuple[str, str | None]] = set()
    repeated: Counter[str] = Counter()
    for card in feishu.sent_cards():
        key = f"feishu:{card.target}"
        counts[key] += 1
        if (card.target, card.uuid) in seen and card.uuid:
            repeated[key] += 1
        seen.add((card.target, card.uuid))
    return counts, repeated


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--channels", type=int, default=1000)
    parser.add_argument("--repos", type=int, default=50)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--pulls", type=int, default=30, help="PRs per repository and week")
    parser.add_argument("--concurrency", type=int, default=16, help="posts in flight per replica")
    parser.add_argument("--lock-seconds", type=float, default=None,
                        help="how long a slot's lock lasts unrenewed: by default 5 s with "
                             "--kill (a killed replica's slots are taken over soon), else "
                             "the service's (a failover is waited out under it, and a "
                             "replica starved of CPU for a few seconds keeps its slots)")
    parser.add_argument("--no-previous-week", action="store_true",
                        help="skip the week before (no trend comparison)")
    parser.add_argument("--kill", action="store_true",
                        help="SIGKILL replica 0 once a third of the channels are posted")
    parser.add_argument("--redis", choices=("single", "cluster", "sentinel"), default="single",
                        help="one redis-server, a 3-node Redis Cluster, or a Sentinel set")
    parser.add_argument("--failover", action="store_true",
                        help="with --redis sentinel or cluster: SIGKILL a master once a third "
                             "are posted (the cluster then runs 3 masters + 3 replicas)")
    parser.add_argument("--log-dir", type=Path, default=None,
                        help="write each replica's warnings to DIR/run-N/replica-M.log")
    parser.add_argument("--runs", type=int, default=1,
                        help="run the whole bench this many times, a new Redis each time")
    parser.add_argument("--platform-rate", type=int, default=None, metavar="N",
                        help="each fake platform takes N posts a second, 429 beyond; the "
                             "bots are configured to post N a second")
    parser.add_argument("--line-seconds", type=float, default=POST_LINE_SECONDS, metavar="S",
                        help="how long a post may wait in line for a turn beyond the pacing "
                             "horizon (0: it fails into the back-off instead)")
    parser.add_argument("--failover-wait", type=float, default=FAILOVER_WAIT_SECONDS,
                        metavar="S", help="how long to wait for the promoted master before "
                                          "reporting the failover slow and going on")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    if args.failover and args.redis == "single":
        parser.error("--failover needs --redis sentinel or --redis cluster")
    if args.lock_seconds is None:
        from bot.store.ledger import POST_LOCK_SECONDS
        args.lock_seconds = 5.0 if args.kill else POST_LOCK_SECONDS
    summaries = [run_bench(args, run) for run in range(args.runs)]
    if args.runs > 1:
        print(f"{args.runs} runs: " + "; ".join(summaries))


def run_bench(args: argparse.Namespace, run: int = 0) -> str:
    """One run of the bench; prints its figures, returns its summary line."""
    log_dir = None
    if args.log_dir is not None:
        log_dir = args.log_dir / f"run-{run}"
        log_dir.mkdir(parents=True, exist_ok=True)

    from bot.store.ledger import Slot, decode_entry
    from bot.store.redis.client import sync_client
    from bot.store.redis.coordination import as_bytes
    from testkit.fakes.feishu import FakeFeishu
    from testkit.fakes.github import FakeGitHub
    from testkit.fakes.github_fixtures import build_week
    from testkit.fakes.rate_limit import FakeRateLimit
    from testkit.fakes.slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
    from testkit.fakes.telegram import TOKEN as TELEGRAM_TOKEN
    from testkit.fakes.telegram import FakeTelegram
    from testkit.redis_topologies import WaitedTooLong
    repos = [f"bench/repo{r:03d}" for r in range(args.repos)]
    limits = {platform: FakeRateLimit(args.platform_rate, burst=max(2, args.platform_rate))
              if args.platform_rate else None for platform in PLATFORMS}
    with (redis_topology(args.redis, replicas=args.failover) as (redis_url, failing),
          FakeGitHub(token=GITHUB_TOKEN) as github,
          FakeSlack(rate_limit=limits["slack"]) as slack,
          FakeTelegram(rate_limit=limits["telegram"]) as telegram,
          FakeFeishu(app_id=FEISHU_APP[0], app_secret=FEISHU_APP[1],
                     rate_limit=limits["feishu"]) as feishu,
          tempfile.TemporaryDirectory(prefix="prdigest-bench-") as workdir,
          contextlib.ExitStack() as stack):
        for index, repo in enumerate(repos):
            pulls = build_week(repo, count=args.pulls, week=WEEK, seed=index, overflow=None)
            pulls += build_week(repo, count=args.pulls // 2, week=PREVIOUS, seed=1000 + index,
                                overflow=None, decoys=0, first_number=5000)
            github.add_repo(repo, pulls)
        config_path = Path(workdir) / "prdigest.toml"
        write_config(config_path, channels=args.channels, repos=args.repos, urls={
            "github": github.base_url, "slack": slack.base_url, "telegram": telegram.base_url,
            "feishu": feishu.base_url}, platform_rate=args.platform_rate)
        env = {"GITHUB_TOKEN": GITHUB_TOKEN, "SLACK_BOT_TOKEN": BOT_TOKEN,
               "SLACK_SIGNING_SECRET": SIGNING_SECRET, "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
               "TELEGRAM_WEBHOOK_SECRET": "bench-secret", "FEISHU_APP_ID": FEISHU_APP[0],
               "FEISHU_APP_SECRET": FEISHU_APP[1], "FEISHU_VERIFICATION_TOKEN": "bench-token",
               "REDIS_URL": redis_url, "NO_PROXY": "127.0.0.1,localhost"}
        options = {"lock_seconds": args.lock_seconds, "concurrency": args.concurrency,
                   "line_seconds": args.line_seconds,
                   "previous_week": not args.no_previous_week,
                   "log_dir": str(log_dir) if log_dir else None}
        context = multiprocessing.get_context("spawn")
        go, reports = context.Event(), context.Queue()
        processes = [context.Process(target=replica_main, name=f"replica-{n}", args=(
            n, str(config_path), redis_url, env, options, go, reports), daemon=True)
            for n in range(args.replicas)]
        stack.callback(stop_replicas, processes)
        for process in processes:
            process.start()
        baseline: dict[int, float] = {}
        while len(baseline) < args.replicas:
            kind, number, value = reports.get(timeout=600)  # a loaded machine starts slowly
            baseline[number] = value

        os.environ.update(env)
        from bot.config import load_config
        from bot.delivery.due import due_runs

        config = load_config(config_path)
        slots: list[Slot] = [run.slot for run in due_runs(config.channels, DUE,
                                                          timedelta_hours(12))]
        client = sync_client(redis_url)
        keys = [Keys().ledger(slot.name) for slot in slots]
        github_requests_before = len(github.requests)
        started = time.perf_counter()
        go.set()
        killed: int | None = None
        failed_over: tuple[int, int | None, float] | None = None
        while True:
            try:
                entries = [decode_entry(as_bytes(raw)) for raw in read_all(client, keys)]
            except REDIS_ERRORS:  # the master is away: ask again once it is back
                time.sleep(0.1)
                continue
            posted = sum(1 for e in entries if e is not None and e.state == "posted")
            if posted == len(slots):
                break
            if args.kill and killed is None and posted >= len(slots) // 3:
                killed = processes[0].pid
                assert killed is not None
                os.kill(killed, signal.SIGKILL)
            if failing is not None and args.failover and failed_over is None \
                    and posted >= len(slots) // 3:
                old = failing.kill_master()
                killed_at = time.perf_counter()
                try:
                    new: int | None = failing.wait_for_failover(old, args.failover_wait)
                except WaitedTooLong:
                    new = None  # reported below; the replicas wait it out, or the run fails
                failed_over = (old, new, time.perf_counter() - killed_at)
            if time.perf_counter() - started > 600:
                raise SystemExit(f"only {posted} of {len(slots)} posted after 600 s")
            # The fakes share this process: reading every ledger entry 20 times a second
            # would starve them, and a limited fake counts its own stalls as bursts.
            time.sleep(0.5 if args.platform_rate else 0.05)
        elapsed = time.perf_counter() - started
        done: dict[int, dict[str, Any]] = {}
        alive = args.replicas - (1 if killed else 0)
        while len(done) < alive:
            try:
                kind, number, value = reports.get(timeout=60)
            except Empty:
                break
            if kind == "done":
                done[number] = value
        for process in processes:
            process.join(timeout=30)
        exits = {n: p.exitcode for n, p in enumerate(processes)
                 if p.exitcode != 0 and p.pid != killed}
        stop_replicas(processes)

        counts, repeated = received_per_channel(slack, telegram, feishu)
        recorded: Counter[str] = Counter()
        for entry in entries:
            assert entry is not None
            recorded[entry.channel] += len(entry.message_ids)
        extra = {c: max(0, counts[c] - recorded[c]) for c in set(counts) | set(recorded)}
        duplicates = sum(extra.values())
        by_platform = {p: sum(n for c, n in extra.items() if c.startswith(f"{p}:"))
                       for p in PLATFORMS}
        missing = sum(max(0, recorded[c] - counts[c]) for c in recorded)
        fetches = {(k.decode() if isinstance(k, bytes) else str(k)): int(v)
                   for k, v in client.hgetall(FETCHES_KEY).items()}
        builds = sum(r["builds"] for r in done.values())  # a killed replica's are not known
        variants = len({(c.repo, c.lang, c.topics) for c in config.channels})
        messages = sum(recorded.values())
        client.close()

    print(f"schedule bench: {args.channels} channels over {args.repos} repositories due at "
          f"{DUE:%Y-%m-%d %H:%M} UTC (week {WEEK}), {args.replicas} replica processes, "
          f"{args.pulls} PRs per repository-week, concurrency {args.concurrency}/replica, "
          f"posts wait in line up to {args.line_seconds:g} s"
          + (f", replica 0 SIGKILLed (pid {killed})" if killed else "")
          + f"; Redis: {args.redis}")
    if failed_over is not None and failed_over[1] is not None:
        print(f"  failover              master :{failed_over[0]} SIGKILLed, :{failed_over[1]} "
              f"promoted after {failed_over[2]:.1f} s")
    elif failed_over is not None:
        print(f"  failover              master :{failed_over[0]} SIGKILLed; no replica "
              f"promoted within {failed_over[2]:.1f} s (slow failover; the run went on)")
    print(f"  all posted after      {elapsed:8.2f} s")
    print(f"  posts per second      {len(slots) / elapsed:8.1f}  ({messages} messages, "
          f"{messages / elapsed:.1f}/s)")
    print(f"  duplicates            {duplicates:8d}  (messages no ledger entry accounts for; "
          f"target 0; of them Feishu cards with a uuid already sent, which Feishu drops: "
          f"{sum(repeated.values())}; missing: {missing})")
    print("  duplicates by platform " + ", ".join(f"{p} {n}" for p, n in by_platform.items()))
    week_fetches = fetches.get(WEEK, 0) + fetches.get(PREVIOUS, 0)
    repository_weeks = args.repos * (1 if args.no_previous_week else 2)
    print(f"  fetches per repository-week {week_fetches / repository_weeks:4.2f}  "
          f"(target <= 1.1)")
    print(f"  replica exits         {len(exits):8d}  (target 0"
          + (f"; exit codes {exits}" if exits else "") + ")")
    print(f"  GitHub week fetches   {fetches.get(WEEK, 0):8d}  (target {args.repos}: one per "
          f"repository) + {fetches.get(PREVIOUS, 0)} of the week before for the trends; "
          f"{len(github.requests) - github_requests_before} HTTP requests")
    print(f"  digest builds         {builds:8d}  ({variants} distinct repository/language/"
          "topics variants)")
    for number in sorted(baseline):
        report = done.get(number)
        if report is None:
            print(f"  replica r{number}            killed; {baseline[number]:.0f} MiB at start")
            continue
        print(f"  replica r{number} peak RSS  {report['rss_mib']:6.0f} MiB  (after imports and "
              f"adapters {baseline[number]:.0f} MiB; posted {report['posted']}, "
              f"re-sent in doubt {report['resent_in_doubt']}, failed {report['failed']}, "
              f"built {report['builds']}, {report['cpu_seconds']:.1f} CPU s)")
    if args.platform_rate:
        print_pacing(args.platform_rate, limits, counts, elapsed,
                     failed=sum(r["failed"] for r in done.values()),
                     longest_wait=max((r["longest_turn_wait"] for r in done.values()),
                                      default=0.0))
        print(f"  summary               wall {elapsed:.1f} s, posts {len(slots)}, "
              f"duplicates {duplicates}, missing {missing}, failed attempts "
              f"{sum(r['failed'] for r in done.values())}, max wait for a turn "
              f"{max((r['longest_turn_wait'] for r in done.values()), default=0.0):.1f} s")
    print(f"  ({os.cpu_count()} CPUs; the fake servers share them with the replicas)")
    return (f"dup {duplicates} ({', '.join(f'{p} {n}' for p, n in by_platform.items())}) "
            f"missing {missing} exits {len(exits)} "
            f"fetches/repo-week {week_fetches / repository_weeks:.2f} {elapsed:.0f}s"
            + (f" failover {failed_over[2]:.1f}s" + ("" if failed_over[1] else " (slow)")
               if failed_over else ""))


def print_pacing(rate: float, limits: dict[str, Any], counts: Counter[str], elapsed: float,
                 *, failed: int, longest_wait: float) -> None:
    """What a platform limit of `rate` posts a second cost: 429 answers, attempts marked
    failed, the longest a message waited for its turn (in line, beyond the pacing
    horizon), and the wall time against the least the rate allows."""
    messages = {p: sum(n for c, n in counts.items() if c.startswith(f"{p}:")) for p in PLATFORMS}
    refused = {p: limit.refused for p, limit in limits.items()}
    least = max(messages.values()) / rate
    print(f"  platform limit        {rate:8g}/s each: answers of 429 {sum(refused.values())} ("
          + ", ".join(f"{p} {refused[p]}" for p in PLATFORMS) + f"); failed attempts {failed}")
    print(f"  wall time vs rate     {elapsed:8.2f} s against {least:.2f} s (messages per "
          "platform: " + ", ".join(f"{p} {messages[p]}" for p in PLATFORMS)
          + f" / {rate:g}/s): {elapsed / least:.2f}x")
    print(f"  longest turn wait     {longest_wait:8.2f} s  (the pacing horizon is "
          f"{MAX_TURN_WAIT:.0f} s: a post whose turn is further waits in line)")


@contextlib.contextmanager
def redis_topology(kind: str, *, replicas: bool = False) -> Iterator[tuple[str, Any]]:
    """(the REDIS_URL of a private Redis of that kind, what can fail its master over -
    a Sentinel set, a cluster with `replicas` - or None)."""
    from testkit.redis_server import private_redis
    from testkit.redis_topologies import private_cluster_set, private_sentinel

    if kind == "cluster":
        with private_cluster_set(masters=3, replicas=1 if replicas else 0) as cluster:
            yield cluster.url, cluster if replicas else None
    elif kind == "sentinel":
        with private_sentinel() as sentinel:
            yield sentinel.url, sentinel
    else:
        with private_redis() as url:
            yield url, None


def read_all(client: Any, keys: Sequence[str]) -> list[Any]:
    """GET every key in one pipeline (per node on a cluster): no cross-slot MGET."""
    with client.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.get(key)
        return list(pipe.execute())


def timedelta_hours(hours: float) -> Any:
    from datetime import timedelta

    return timedelta(hours=hours)


if __name__ == "__main__":
    main()
