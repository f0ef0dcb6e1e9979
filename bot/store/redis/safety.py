"""Whether the Redis prdigest runs on keeps what prdigest writes.

Every key prdigest writes expires (ledger entries, locks, claims, the cache), so under
any `volatile-*` policy - the common default of managed Redis - as under `allkeys-*`,
a full Redis may evict a ledger entry, and a `posted` entry evicted is a digest posted
again. Only `noeviction` keeps them: a full Redis then refuses writes, which prdigest
handles like an outage. Without an append-only file or snapshots, a restart forgets
the ledger, the subscriptions and the notice claims.

`INFO memory` and `INFO persistence` answer on managed services too; `CONFIG GET save`
often does not (the command is renamed or refused there), and then only the
append-only file is judged. Every master of a Cluster is asked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import redis
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster as AsyncCluster

from bot.errors import UserError
from bot.store.redis.client import REDIS_ERRORS, async_client

log = logging.getLogger(__name__)

SAFE_POLICIES = frozenset({"noeviction"})
GUIDE = 'docs/deployment.md, "Redis the way it must be run"'


class UnsafeRedis(UserError):
    """Redis may drop what prdigest keeps, and `cache.unsafe_redis = "refuse"`."""


def hazards_of(node: str, memory: Mapping[str, Any], persistence: Mapping[str, Any],
               save: str | None) -> list[str]:
    """What is wrong with one server, from its `INFO memory`, `INFO persistence` and
    `CONFIG GET save` (None when that was refused): one sentence each."""
    found = []
    where = f" on {node}" if node else ""
    policy = str(memory.get("maxmemory_policy", "")).strip()
    if policy and policy not in SAFE_POLICIES:
        found.append(f"maxmemory-policy is {policy}{where}: Redis may evict prdigest's keys "
                     "(all of them expire), and an evicted ledger entry posts a digest "
                     "again; set maxmemory-policy noeviction")
    aof = str(persistence.get("aof_enabled", "")) == "1"
    if not aof and save is not None and not save.strip():
        found.append(f"persistence is off{where} (no append-only file, no snapshots): a "
                     "restart forgets the ledger, the subscriptions and the notice claims; "
                     "set appendonly yes")
    return found


def _save(value: Mapping[Any, Any] | None) -> str | None:
    if not value:
        return None
    found = value.get("save", value.get(b"save"))
    if isinstance(found, bytes):
        return found.decode(errors="replace")
    return None if found is None else str(found)


async def redis_hazards(client: aioredis.Redis) -> list[str]:
    """What is wrong with the Redis behind `client` (every master of a Cluster); [] when
    nothing is, or when Redis cannot be asked just now (an outage says so elsewhere)."""
    try:
        if isinstance(client, AsyncCluster):
            await client.initialize()
            found = []
            for node in client.get_primaries():
                found += hazards_of(node.name, await client.info("memory", target_nodes=node),
                                    await client.info("persistence", target_nodes=node),
                                    await _config_save(client, node))
            return found
        return hazards_of("", await client.info("memory"), await client.info("persistence"),
                          await _config_save(client, None))
    except REDIS_ERRORS as exc:
        log.info("redis: could not check its eviction policy and persistence (%s)",
                 type(exc).__name__)
        return []


async def _config_save(client: aioredis.Redis, node: Any) -> str | None:
    try:
        if node is not None:
            answer = await client.config_get("save", target_nodes=node)
        else:
            answer = await client.config_get("save")
    except redis.exceptions.ResponseError:  # refused or renamed: a managed service
        return None
    return _save(answer)


async def check_url(url: str, variable: str) -> list[str]:
    """`redis_hazards` of the Redis at `url`, on a client of its own (the command line,
    before serving)."""
    client = async_client(url, variable)
    try:
        return await redis_hazards(client)
    finally:
        await client.aclose()


def refuse_if_unsafe(url: str, variable: str) -> None:
    """`cache.unsafe_redis = "refuse"`: `UnsafeRedis` (one line, exit 2) when Redis may
    drop what prdigest keeps. A Redis that cannot be reached now is not judged: the
    service starts degraded, as on any outage."""
    judge(asyncio.run(check_url(url, variable)), "refuse")


def judge(hazards: list[str], policy: str) -> None:
    """Warn of each hazard; with `policy == "refuse"`, raise `UnsafeRedis` instead."""
    if not hazards:
        return
    if policy == "refuse":
        raise UnsafeRedis(f"redis: {hazards[0]} ({GUIDE}; cache.unsafe_redis = \"warn\" "
                          "starts anyway)")
    for hazard in hazards:
        log.warning("redis: %s (%s)", hazard, GUIDE)
