"""Build + render time and peak memory of a digest for 30, 300 and 3000 PRs.

PRs are generated from the example snapshot's week (the template PR set): copies with
new numbers, spread over the week. Prints a table; targets: 3000 PRs under 1 s, growth
no worse than N log N.

    python -m bench.digest [--sizes 30,300,3000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import math
import time
import tracemalloc
from datetime import timedelta
from pathlib import Path

import msgspec

from bot.config import RepoConfig, load_config
from bot.engine import build_digest
from bot.engine.digest import week_pulls
from bot.models import Lang, PullRequest, Snapshot
from bot.render import render_digest
from bot.snapshot import read_snapshot

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
WEEK = "2026-W29"
FORMATS = ("markdown", "text", "json")


def generate(size: int) -> Snapshot:
    """`size` PRs made from the template set, each with its own number and merge time."""
    template = read_snapshot(EXAMPLES / "snapshot.json")
    tz = load_config(EXAMPLES / "prdigest.toml").repo(template.repository).timezone
    base = [p for p, how in week_pulls(template, WEEK, tz) if how == "merged"]
    start = min(p.merged_at for p in base if p.merged_at)
    pulls: list[PullRequest] = []
    for i in range(size):
        model = base[i % len(base)]
        number = 10_000 + i
        merged = start + timedelta(seconds=(i * 7 * 24 * 3600 // max(size, 1)) % (5 * 24 * 3600))
        pulls.append(msgspec.structs.replace(
            model, number=number, title=f"{model.title} ({i})",
            url=f"https://github.com/{template.repository}/pull/{number}",
            merged_at=merged, closed_at=merged, state="merged",
        ))
    return msgspec.structs.replace(template, pulls=tuple(pulls))


def build_and_render(snapshot: Snapshot, repo: RepoConfig, lang: Lang, fmt: str) -> str:
    digest = build_digest(snapshot, WEEK, repo_config=repo, lang=lang)
    return render_digest(digest, fmt)  # type: ignore[arg-type]


def measure(snapshot: Snapshot, fmt: str, repeat: int) -> tuple[float, float]:
    """(best wall seconds, peak traced MiB) for one build + render; the config is read
    once, outside the timing."""
    repo = load_config(EXAMPLES / "prdigest.toml").repo(snapshot.repository)
    build_and_render(snapshot, repo, "zh", fmt)  # warm caches: templates, catalogs
    best = math.inf
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        build_and_render(snapshot, repo, "zh", fmt)
        best = min(best, time.perf_counter() - started)
    tracemalloc.start()
    build_and_render(snapshot, repo, "zh", fmt)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="30,300,3000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'PRs':>6} {'format':>9} {'build+render ms':>16} {'peak MiB':>9}")
    times: dict[tuple[int, str], float] = {}
    for size in sizes:
        snapshot = generate(size)
        for fmt in FORMATS:
            seconds, peak = measure(snapshot, fmt, args.repeat)
            times[(size, fmt)] = seconds
            print(f"{size:>6} {fmt:>9} {seconds * 1000:>16.1f} {peak:>9.1f}")
    if len(sizes) >= 2:
        small, large = sizes[-2], sizes[-1]
        nlogn = (large * math.log(large)) / (small * math.log(small))
        print(f"\ngrowth {small} -> {large} PRs (N log N would be x{nlogn:.1f}):")
        for fmt in FORMATS:
            print(f"  {fmt:>9}: x{times[(large, fmt)] / times[(small, fmt)]:.1f}")
        worst = max(times[(large, fmt)] for fmt in FORMATS)
        print(f"\n{large} PRs worst format: {worst * 1000:.0f} ms (target < 1000 ms)")


if __name__ == "__main__":
    main()
