"""What `bench.commands` prints: each level's round trips against the echo ceiling and the
targets, per platform, and the server stack they were measured on."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client.parser import text_string_to_metric_families

from bench.command_traffic import Arrivals

if TYPE_CHECKING:
    from bench.commands import Level


def report(results: list[Level], platforms: list[str],
           before: dict[tuple[str, tuple[tuple[str, str], ...]], float],
           after: dict[tuple[str, tuple[tuple[str, str], ...]], float],
           arrivals: Arrivals, log: Path, replies: dict[str, tuple[int, str]]) -> int:
    """Print the table, the checks and the target lines; 0 when the figures are sound."""
    echo = {r.concurrency: r for r in results if r.platform == "echo"}
    print()
    print("round trip = webhook request sent -> reply received by the fake platform "
          "(echo: -> response received)")
    print(f"{'route':<9}{'conc':>5}{'reqs':>6}{'err':>5}{'p50 ms':>9}{'p99 ms':>9}"
          f"{'max ms':>9}{'req/s':>9}{'x echo':>8}{'ack p50':>9}{'app CPU':>9}{'loop':>6}"
          f"{'ms/req':>8}{'bench CPU':>10}")
    for r in results:
        ratio = r.throughput / echo[r.concurrency].throughput if r.concurrency in echo else 0
        print(f"{r.platform:<9}{r.concurrency:>5}{r.ok:>6}{sum(r.errors.values()):>5}"
              f"{r.percentile(0.5):>9.1f}{r.percentile(0.99):>9.1f}{r.percentile(1.0):>9.1f}"
              f"{r.throughput:>9.0f}{ratio:>8.2f}{r.percentile(0.5, ack=True):>9.1f}"
              f"{r.app_cpu / r.wall:>9.0%}{r.loop_cpu / r.wall:>6.0%}"
              f"{1000 * r.app_cpu / max(r.ok, 1):>8.2f}{r.bench_cpu / r.wall:>10.0%}")
    print("ack p50: until the webhook's own HTTP response. CPU over wall time: app = the "
          "server process,\nloop = its event-loop thread alone, bench = this process "
          "(client and fakes);\nms/req = server CPU per request.")

    sound = True
    print()
    for r in results:
        if r.errors:
            sound = False
            print(f"ERRORS {r.platform} c={r.concurrency}: {dict(r.errors)}")
    for kind in ("held-pull", "pull", "pointer"):
        misses = (metric(after, "prdigest_cache_lookups_total", kind=kind, result="miss")
                  - metric(before, "prdigest_cache_lookups_total", kind=kind, result="miss"))
        hits = (metric(after, "prdigest_cache_lookups_total", kind=kind, result="hit")
                - metric(before, "prdigest_cache_lookups_total", kind=kind, result="hit"))
        print(f"cache during the runs, {kind} entries: {hits:.0f} hits, {misses:.0f} misses")
        sound = sound and misses == 0
    for platform in platforms:
        asked = sum(r.ok + sum(r.errors.values()) for r in results if r.platform == platform)
        answered = (metric(after, "prdigest_commands_total", platform=platform,
                           command="risks", outcome="ok")
                    - metric(before, "prdigest_commands_total", platform=platform,
                             command="risks", outcome="ok"))
        size, text = replies.get(platform, (0, ""))
        excerpt = " ".join(text.split())[:90]
        print(f"{platform}: {asked} asked, {answered:.0f} answered `risks ... ok` by the "
              f"handler; last reply {size} bytes: {excerpt}")
        sound = sound and answered == asked
    if arrivals.unexpected:
        print(f"replies nobody waited for (late or duplicate): {arrivals.unexpected}")
        sound = False
    problems = [line for line in log.read_text().splitlines()
                if re.search(r"\b(ERROR|Traceback|CRITICAL)\b", line)]
    print(f"server log: {len(problems)} error lines" + (f", e.g. {problems[0][:160]}"
                                                       if problems else ""))
    sound = sound and not problems

    print()
    peak_echo = max((r.throughput for r in echo.values()), default=0.0)
    for platform in platforms:
        mine = {r.concurrency: r for r in results if r.platform == platform}
        target = mine.get(P99_TARGET_CONCURRENCY)
        if target is not None:
            p99 = target.percentile(0.99)
            verdict = "PASS" if p99 < P99_TARGET_MS else "MISS"
            print(f"{verdict} {platform}: p99 at {P99_TARGET_CONCURRENCY} concurrent "
                  f"{p99:.1f} ms (target < {P99_TARGET_MS:.0f} ms)")
        peak = max(mine.values(), key=lambda r: r.throughput)
        ratio = peak.throughput / peak_echo if peak_echo else 0.0
        verdict = "PASS" if ratio >= THROUGHPUT_TARGET_RATIO else "MISS"
        print(f"{verdict} {platform}: peak throughput {peak.throughput:.0f} req/s "
              f"(at {peak.concurrency} concurrent) = {ratio:.2f} x the echo's peak "
              f"{peak_echo:.0f} req/s (target >= {THROUGHPUT_TARGET_RATIO})")
    if not sound:
        print("\nThe run had errors or cache misses (above): the figures are not trustworthy.")
    return 0 if sound else 1


def _server_stack() -> str:
    """The protocol and loop `prdigest serve` runs: guarded h11 (bot.web.connections),
    uvloop when installed."""

    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio loop"
    return f"h11 with read deadline, {loop}"


P99_TARGET_MS = 50.0


P99_TARGET_CONCURRENCY = 10


THROUGHPUT_TARGET_RATIO = 0.5


def scrape(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Prometheus samples by (name, sorted labels)."""
    values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return values


def metric(values: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str,
           **labels: str) -> float:
    return values.get((name, tuple(sorted(labels.items()))), 0.0)
