"""What the merge poller costs GitHub, and how long its rounds take, at organisation size.

On the fake GitHub (GraphQL charged GitHub's points; the closed-PR list with ETags and
304s) and a private redis-server, with the poller wired as the server wires it:
- cost by polling: `--repos` repositories, `--merges` merges each, one merge per
  repository between rounds, so every round sees every list changed: GraphQL points
  and fetches per merge (target <= 1.1 points per merge: each merge fetched once);
- rate limits: every answer a limit (a secondary one: 403 with Retry-After 60; a
  primary one: remaining 0, reset in 60 s), `--limited-rounds` rounds over
  `--limited-repos` repositories: list requests sent (target <= 1 per repository per
  window);
- round time: `--latency-repos` repositories, `--latency-ms` per answer, for each
  `--concurrency`: the first round (lists fetched, ETags stored) and a steady one
  (every list unchanged, 304).

    python -m bench.poller [--repos 20] [--merges 14] [--latency-repos 2000]
                           [--latency-ms 300] [--concurrency 4,10]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from contextlib import AbstractAsyncContextManager
from typing import Any

from bench.github import redis_url
from bot.store.keys import Keys
from bot.store.redis.coordination import RedisCoordination
from testkit.poller_world import PollerWorld, poller_world


def world_in(url: str, prefix: str, **options: Any
             ) -> AbstractAsyncContextManager[PollerWorld]:
    """The poller world, its claims in the Redis at `url` under keys of `prefix`."""
    return poller_world(RedisCoordination.from_url(url, keys=Keys(prefix)), **options)


async def next_round(world: PollerWorld) -> float:
    """One round, after the per-interval locks of the last one ended; its seconds."""
    await asyncio.sleep(0.02)
    started = time.perf_counter()
    await world.poller.poll_once()
    return time.perf_counter() - started


async def cost_rows(url: str, repos: int, merges: int) -> list[str]:
    async with world_in(url, "prdigest-bench-poller-cost", repos=repos,
                        pulls_per_repo=merges) as world:
        await world.poller.poll_once()
        seconds = []
        for _ in range(merges):
            for repo in world.config.repos:
                world.merge(repo)
            seconds.append(await next_round(world))
        total = repos * merges
        points, fetches = world.points(), world.github.count("graphql")
        sent = len(world.notices())
        lists = world.list_requests()
    return [
        f"cost by polling: {repos} repositories x {merges} merges = {total} merges, "
        f"a round after each merge of every repository ({merges} rounds)",
        f"  GraphQL points {points} ({points / total:.2f} per merge, target <= 1.1); "
        f"fetches {fetches} ({fetches / total:.2f} per merge); notices {sent}; "
        f"list requests {lists}",
        f"  round time: mean {sum(seconds) / len(seconds):.2f} s, "
        f"max {max(seconds):.2f} s",
    ]


async def limited_rows(url: str, repos: int, rounds: int) -> list[str]:
    rows = [f"rate limits: every answer limited, {rounds} rounds over {repos} repositories"]
    for kind, label in (("secondary", "secondary (403, Retry-After 60)"),
                        ("primary", "primary (403, remaining 0, reset in 60 s)")):
        async with world_in(url, f"prdigest-bench-poller-{kind}", repos=repos,
                            pulls_per_repo=1) as world:
            world.github.rate_limit_next(1_000_000, kind=kind, retry_after=60, reset_in=60,
                                         status=403)
            started = time.perf_counter()
            for _ in range(rounds):
                await next_round(world)
            seconds = time.perf_counter() - started
            sent = world.list_requests()
            paused = world.poller.paused
        rows.append(f"  {label:<44} requests {sent:>4} in {rounds} rounds "
                    f"({sent / repos:.2f} per repository in the window, target <= 1); "
                    f"repository polls paused {paused}; {seconds:.2f} s")
    return rows


async def latency_rows(url: str, repos: int, latency: float,
                       concurrencies: list[int]) -> list[str]:
    rows = [f"round time: {repos} repositories, {latency * 1000:.0f} ms per answer"]
    for concurrency in concurrencies:
        async with world_in(url, f"prdigest-bench-poller-latency-{concurrency}",
                            repos=repos, pulls_per_repo=1, latency=latency,
                            concurrency=concurrency) as world:
            world.merge(next(iter(world.config.repos)))  # one closed PR in one list
            first = await next_round(world)
            steady = await next_round(world)
            requests = world.list_requests()
        sequential = repos * latency
        rows.append(f"  concurrency {concurrency:>2}: first round {first:7.1f} s, steady "
                    f"round (all 304) {steady:7.1f} s; {requests} list requests; one "
                    f"repository at a time would take ~{sequential:.0f} s a round")
    return rows


async def run(args: argparse.Namespace) -> None:
    with redis_url() as url:
        for line in await cost_rows(url, args.repos, args.merges):
            print(line, flush=True)
        for line in await limited_rows(url, args.limited_repos, args.limited_rounds):
            print(line, flush=True)
        if args.latency_repos:
            concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
            for line in await latency_rows(url, args.latency_repos,
                                           args.latency_ms / 1000, concurrencies):
                print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=20)
    parser.add_argument("--merges", type=int, default=14)
    parser.add_argument("--limited-repos", type=int, default=100)
    parser.add_argument("--limited-rounds", type=int, default=5)
    parser.add_argument("--latency-repos", type=int, default=2000,
                        help="0 leaves the round-time rows out")
    parser.add_argument("--latency-ms", type=float, default=300.0)
    parser.add_argument("--concurrency", default="4,10")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
