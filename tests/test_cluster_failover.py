"""A Redis Cluster master failing over under the weekly schedule: the asyncio cluster
client's torn-down writes (`AttributeError: 'NoneType' object has no attribute
'writelines'`) and its refused connections are an outage that is waited out - the
confirmed post is recorded, no replica's pass dies of it, nothing is posted twice."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio.connection as aioconnection

from bot.clock import HeldClock
from bot.delivery.due import due_runs
from bot.delivery.schedule import Scheduler
from bot.snapshot import read_snapshot
from bot.store.coordination import StoreUnavailable
from bot.store.ledger import Ledger
from bot.store.redis.coordination import RedisCoordination
from testkit.redis_topologies import ClusterSet, flush, private_cluster_set
from testkit.schedule import (
    SHANGHAI_MONDAY_9,
    CountingSource,
    FakePlatforms,
    FakePoster,
    make_config,
    scheduler,
    statuses,
)

pytestmark = [pytest.mark.redis, pytest.mark.failover]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
WRITE_TORN_DOWN = "'NoneType' object has no attribute 'writelines'"


def channels(count: int) -> list[dict[str, Any]]:
    return [{"platform": p, "id": f"{p}-{n}", "repo": "acme/lumen",
             "timezone": "Asia/Shanghai", "schedule": "0 9 * * MON", "lang": "en",
             "topics": []}
            for n in range(count) for p in ("slack", "telegram", "feishu")]


@contextlib.asynccontextmanager
async def one_replica(url: str, count: int) -> AsyncIterator[tuple[Scheduler, FakePlatforms]]:
    """One replica on an emptied cluster, due to post `count` channels of each platform."""
    flush(url)
    clock = HeldClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    client = RedisCoordination.from_url(url)
    try:
        yield scheduler(make_config(channels(count)),
                        CountingSource(read_snapshot(EXAMPLES / "snapshot.json")), client,
                        FakePoster(platforms, "r1"), clock, lock_seconds=5.0), platforms
    finally:
        await client.close()


@pytest.fixture
def torn_down_writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every write of a confirmed post (`"state":"posted"`) fails once the way a
    failover makes it fail: the connection is closed under the write and the stream
    raises AttributeError. Returns the writes that failed so."""
    original = aioconnection.AbstractConnection.send_packed_command
    failed: list[bytes] = []

    async def send(self: Any, command: Any, check_health: bool = True) -> None:
        packed = b"".join(command) if isinstance(command, list) else bytes(command)
        if b'"state":"posted"' in packed and packed not in failed:
            failed.append(packed)
            await self.disconnect(nowait=True)
            raise AttributeError(WRITE_TORN_DOWN)
        await original(self, command, check_health)

    monkeypatch.setattr(aioconnection.AbstractConnection, "send_packed_command", send)
    return failed


async def test_a_post_whose_record_is_torn_down_is_recorded_once(
    redis_cluster_url: str, torn_down_writes: list[bytes]
) -> None:
    async with one_replica(redis_cluster_url, 2) as (replica, platforms):
        results = await replica.tick()
        entries = await replica.ledger.get_many([r.slot for r in due_runs(
            replica.config.channels, replica.clock.now(), replica.catch_up)])
        again = await replica.tick()
    assert len(torn_down_writes) == 6  # each record's first write failed ...
    assert statuses(results) == Counter({"posted": 6})  # ... and was written again
    assert all(e is not None and e.state == "posted" for e in entries)
    assert platforms.counts() == Counter({(d.week, d.channel, d.repo): 1
                                          for d in platforms.delivered})
    assert len(platforms.delivered) == 6
    assert statuses(again) == Counter({"already-posted": 6})


def lost_answer(kind: str, packed: bytes, seen: set[bytes]) -> bool:
    """Whether `packed` is the first write of its slot of `kind` - the lock's taking,
    the intent (`sending`) or the record (`posted`)."""
    if kind == "lock":
        if b"lock:post:{" not in packed:
            return False
        mark = packed[packed.index(b"lock:post:{"):].split(b"}", 1)[0]
    else:
        if f'"state":"{kind}"'.encode() not in packed:
            return False
        mark = packed
    if mark in seen:
        return False
    seen.add(mark)
    return True


@pytest.mark.parametrize("kind", ["lock", "sending", "posted"])
async def test_a_write_sent_again_after_its_answer_was_lost_knows_its_first_try(
    redis_cluster_url: str, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """The write went out and landed; its answer is lost with the connection, and the
    write is sent again: taking the lock, writing the intent, recording the post each
    know their own earlier try - no slot left busy or in doubt, none posted twice."""
    original = aioconnection.AbstractConnection.send_packed_command
    seen: set[bytes] = set()
    lost: list[bytes] = []

    async def send(self: Any, command: Any, check_health: bool = True) -> None:
        packed = b"".join(command) if isinstance(command, list) else bytes(command)
        await original(self, command, check_health)
        if lost_answer(kind, packed, seen):
            lost.append(packed)
            await self.disconnect(nowait=True)
            raise AttributeError(WRITE_TORN_DOWN)

    monkeypatch.setattr(aioconnection.AbstractConnection, "send_packed_command", send)
    async with one_replica(redis_cluster_url, 1) as (replica, platforms):
        results = await replica.tick()
    assert len(lost) == 3 and statuses(results) == Counter({"posted": 3})
    assert replica.stats.duplicates_seen == 0 and replica.stats.resent_in_doubt == 0
    assert len(platforms.delivered) == 3


@pytest.fixture
def cluster() -> Iterator[ClusterSet]:
    with private_cluster_set(masters=3, replicas=1) as started:
        yield started


async def test_a_master_failover_mid_run_loses_nothing_and_doubles_nothing(
    cluster: ClusterSet
) -> None:
    config = make_config(channels(12))
    clock = HeldClock(SHANGHAI_MONDAY_9)
    platforms = FakePlatforms(clock)
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    clients = [RedisCoordination.from_url(cluster.url + "?failover_seconds=20")
               for _ in range(3)]
    # Locks outlive the clients' failover window (20 s), as in production (60 s): a
    # replica whose post is in flight through the failover records it before another
    # may take the slot over. A 5 s lock expired on the promoted replica when a loaded
    # machine took longer over the failover, and the slot went the in-doubt way.
    replicas = [scheduler(config, CountingSource(snapshot), client,
                          FakePoster(platforms, f"r{n}", latency=0.05), clock,
                          replica=f"r{n}", lock_seconds=30.0, build_lock_seconds=30.0,
                          concurrency=2)
                for n, client in enumerate(clients)]
    slots = [run.slot for run in due_runs(config.channels, clock.now(), replicas[0].catch_up)]
    outages: Counter[str] = Counter()

    async def run(replica: Scheduler) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                await replica.tick()
                entries = await replica.ledger.get_many(slots)
                if all(e is not None and e.state == "posted" for e in entries):
                    return
            except StoreUnavailable as exc:  # as run_forever: the next pass goes on
                outages[exc.reason] += 1
            await asyncio.sleep(0.1)
        raise AssertionError("not every slot was posted within 120 s")

    async def kill_when_a_third_is_out() -> tuple[int, int]:
        while len(platforms.delivered) < len(slots) // 3:
            await asyncio.sleep(0.01)
        old = cluster.kill_master()
        return old, await asyncio.to_thread(cluster.wait_for_failover, old)

    try:
        killer = asyncio.create_task(kill_when_a_third_is_out())
        await asyncio.gather(*(run(r) for r in replicas))
        old, new = await killer
        entries = await Ledger(clients[0]).get_many(slots)
    finally:
        for client in clients:
            await client.close()
    assert new != old and new in cluster.masters()
    assert all(e is not None and e.state == "posted" for e in entries)  # 0 lost
    per_slot = platforms.counts()
    assert set(per_slot) == {(s.week, s.channel, s.repo) for s in slots}
    doubled = [(d.channel, d.replica) for d in platforms.delivered
               if per_slot[(d.week, d.channel, d.repo)] > 1]
    assert not doubled, doubled  # 0 doubled, Telegram included
    assert sum(r.stats.resent_in_doubt for r in replicas) == 0


async def test_healthz_names_the_master_that_fails_until_a_replica_takes_over(
    cluster: ClusterSet
) -> None:
    from bot.source import SnapshotSource
    from bot.web.app import create_app
    from testkit.server_support import (
        clock,
        example_config,
        example_snapshot,
        recording_adapters,
        services_of,
        serving,
    )

    app = create_app(example_config(), redis_url=cluster.url,
                     source=SnapshotSource(example_snapshot()), clock=clock(),
                     background=False, adapters=recording_adapters())
    async with serving(app) as http:
        before = await http.get("/healthz")
        # Not the node a single PING would go to: that one alone would not show it.
        default = services_of(app).process.port.client.get_default_node().port  # type: ignore[attr-defined]
        victim = cluster.kill_master(next(p for p in cluster.masters() if p != default))
        during = await http.get("/healthz")
        new = await asyncio.to_thread(cluster.wait_for_failover, victim)
        after = await http.get("/healthz")  # learns the new layout from the failed check
        healed = await http.get("/healthz")
    assert during.status_code == 503, during.text
    assert before.status_code == 200 and set(before.json()["redis"]["cluster"]["masters"]
                                              .values()) == {"ok"}
    assert during.json()["redis"]["cluster"]["masters"][f"127.0.0.1:{victim}"] != "ok"
    assert during.json()["redis"]["error"] == "ClusterDown"
    states = [after.json()["redis"], healed.json()["redis"]]
    assert any(s["ok"] and f"127.0.0.1:{new}" in s["cluster"]["masters"] for s in states), states
    assert healed.status_code == 200, healed.text
