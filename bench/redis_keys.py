"""What a year of weekly posts leaves in Redis: 52 Mondays x 1,000 channels through the
real scheduler (one replica, the cache on, fake platforms), then every key is listed
with its expiry. Target: no key without a TTL - nothing grows without bound.

    python -m bench.redis_keys [--weeks 52] [--channels 1000] [--redis single|cluster]

Prints the keys by kind, those without a TTL (target: none), the ledger's index sets
(how many, the largest) and Redis's memory in use.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from typing import Any

from bench.schedule import redis_topology
from bot.store.redis.client import sync_client
from testkit.ledger_years import keys_without_expiry, run
from testkit.redis_topologies import all_keys


def kind(key: str) -> str:
    """A key's kind: its name with the week, channel and numbers taken out."""
    key = re.sub(r"\{[^}]*\}", "{..}", key)
    key = re.sub(r"\d{4}-W\d{2}", "W", key)
    return re.sub(r":\d+", ":N", key)


def used_memory(client: Any, url: str) -> int:
    if url.startswith("redis+cluster"):
        infos = client.info("memory", target_nodes=client.get_primaries())
        return sum(int(i["used_memory"]) for i in infos.values())
    return int(client.info("memory")["used_memory"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--channels", type=int, default=1000)
    parser.add_argument("--redis", choices=("single", "cluster"), default="single")
    args = parser.parse_args()
    with redis_topology(args.redis) as (url, _):
        started = time.perf_counter()
        counts = run(url, weeks=args.weeks, channels=args.channels)
        elapsed = time.perf_counter() - started
        client: Any = sync_client(url)
        keys = [k.decode() for k in all_keys(client)]
        kinds = Counter(kind(k) for k in keys)
        forever = keys_without_expiry(url)
        index = [k for k in keys if ":ledger-index:" in k]
        largest = max((client.scard(k) for k in index), default=0)
        memory = used_memory(client, url)
        client.close()
    print(f"redis keys bench: {args.weeks} weeks x {args.channels} channels posted "
          f"({dict(counts)}) in {elapsed:.0f} s; Redis: {args.redis}")
    print(f"  keys                  {len(keys):8d}")
    for name, count in kinds.most_common():
        print(f"    {count:8d}  {name}")
    print(f"  keys without a TTL    {len(forever):8d}  (target 0)" +
          (": " + ", ".join(forever[:10]) if forever else ""))
    print(f"  ledger index sets     {len(index):8d}  (largest {largest} slots; each expires "
          "with its week's entries)")
    print(f"  Redis memory in use   {memory / 2**20:8.1f} MiB")


if __name__ == "__main__":
    main()
