"""A ledger write on a Redis Cluster waits for a replica of its master, and a replica
the client's layout does not show yet (one still joining when the client started, or
the old master back as a replica after a failover) is waited for once the layout is
learned again - the write is not silently left to asynchronous replication."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from bot.store.redis.client import async_client
from bot.store.redis.failover import LAYOUT_RECHECK_SECONDS, FailoverCluster
from testkit.redis_topologies import ClusterSet, private_cluster_set

pytestmark = [pytest.mark.redis, pytest.mark.failover]

KEY = "prdigest:test:ledger:{2026-W29:telegram:-100:acme/lumen}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[ClusterSet]:
    with private_cluster_set(masters=3, replicas=1) as started:
        yield started


async def replicated_write(client: FailoverCluster, value: str) -> list[int]:
    """One write with its WAIT; the replicas' answers."""
    async with client.pipeline(transaction=False) as pipe:
        pipe.set(KEY, value)
        pipe.wait_for_replica((KEY,), 2000)  # type: ignore[attr-defined]
        await pipe.execute()
    return list(pipe.replica_acks)  # type: ignore[attr-defined]


def forget_replicas(client: FailoverCluster) -> None:
    """The layout as a client that started before the replicas joined has it."""
    cache: dict[int, Any] = client.nodes_manager.slots_cache
    for slot, nodes in cache.items():
        cache[slot] = nodes[:1]


def known_replicas(client: FailoverCluster) -> int:
    return len(client.nodes_manager.slots_cache[client.keyslot(KEY)]) - 1


async def test_a_write_waits_for_the_replica_of_its_master(cluster: ClusterSet) -> None:
    client: Any = async_client(cluster.url)
    try:
        acks = await replicated_write(client, "one")
        assert acks == [1]
        assert await client.get(KEY) == b"one"
    finally:
        await client.aclose()


async def test_a_replica_missing_from_an_old_layout_is_found_and_waited_for(
    cluster: ClusterSet
) -> None:
    client: Any = async_client(cluster.url)
    try:
        await client.get(KEY)  # the layout is learned
        forget_replicas(client)
        # Learned just now: not asked again at every write.
        assert await replicated_write(client, "fresh") == []
        assert known_replicas(client) == 0
        client.layout_learned_at = (asyncio.get_running_loop().time()
                                    - LAYOUT_RECHECK_SECONDS - 1)
        assert await replicated_write(client, "old") == [1]
        assert known_replicas(client) == 1
    finally:
        await client.aclose()
