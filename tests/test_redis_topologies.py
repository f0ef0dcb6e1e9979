"""`REDIS_URL` names one server, a Redis Cluster or a Sentinel service: the URL's
errors, a real failover (SIGKILLed master) under three schedulers, a Redis user
without scripting, and the CLI against a cluster."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli import app as cli
from bot.clock import HeldClock
from bot.digests import Digests
from bot.errors import ConfigError
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.coordination import StoreUnavailable
from bot.store.ledger import Ledger
from bot.store.redis.client import parse, sync_client
from bot.store.redis.coordination import RedisCoordination
from bot.web.app import create_app
from testkit.redis_topologies import SentinelSet, all_keys, flush, private_sentinel
from testkit.schedule import (
    CountingSource,
    FakePlatforms,
    FakePoster,
    at,
    make_config,
)
from testkit.server_support import (
    clock,
    example_config,
    example_snapshot,
    recording_adapters,
    serving,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MONDAY_9 = at("2026-07-20T01:00")  # 09:00 in Shanghai: 2026-W29 is due


def app_with(redis_url: str) -> Any:
    return create_app(example_config(), redis_url=redis_url,
                      source=SnapshotSource(example_snapshot()), clock=clock(),
                      background=False,
                      adapters=recording_adapters())


# --- the URL -------------------------------------------------------------------------


def test_each_scheme_names_its_topology() -> None:
    single = parse("rediss://user:p%40ss@cache.example:6380/2?ssl_cert_reqs=required")
    assert (single.mode, single.nodes, single.db) == ("single", (("cache.example", 6380),), 2)
    assert single.options["password"] == "p@ss" and single.options["ssl"] is True
    cluster = parse("redis+cluster://10.0.0.1:7000,10.0.0.2")
    assert (cluster.mode, cluster.nodes) == ("cluster", (("10.0.0.1", 7000), ("10.0.0.2", 6379)))
    sentinel = parse("redis+sentinel://s1:26379,s2/mymaster/3?sentinel_password=x")
    assert (sentinel.mode, sentinel.service, sentinel.db) == ("sentinel", "mymaster", 3)
    assert sentinel.nodes == (("s1", 26379), ("s2", 26379))
    assert sentinel.sentinel_options == {"password": "x"}


@pytest.mark.parametrize(("url", "says"), [
    ("http://localhost:6379", "not a Redis URL"),
    ("redis://localhost:6379/0?cluster=true", "unknown option 'cluster'"),
    ("redis+cluster://a:7000/1", "only database 0"),
    ("redis+sentinel://s1:26379", "name the Sentinel service"),
    ("redis://a:1,b:2", "several hosts"),
    ("redis+cluster://a:notaport", "not host:port"),
    ("redis://a:6379/0?socket_timeout=soon", "socket_timeout"),
    ("redis+cluster://a:7000?failover_seconds=90", "failover_seconds: from 0 to 40"),
    ("redis+sentinel://s1/mymaster/0?failover_seconds=-1", "failover_seconds: from 0 to 40"),
])
def test_a_malformed_url_is_one_line_naming_the_variable(url: str, says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse(url, "MY_REDIS")
    message = str(raised.value)
    assert message.startswith("MY_REDIS: ") and says in message and "\n" not in message


def test_prdigest_post_with_a_malformed_url_exits_2_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", "redis+sentinel://127.0.0.1:26379")
    result = CliRunner().invoke(cli, [
        "post", "acme/lumen", "--week", "2026-W29", "--channel", "slack:C0123456",
        "--config", str(EXAMPLES / "prdigest.toml"),
        "--snapshot", str(EXAMPLES / "snapshot.json")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "REDIS_URL: name the Sentinel service" in result.output


# --- a cluster: the CLI's subscriptions and the service's health ---------------------


def test_the_cli_subscribes_through_a_cluster(redis_cluster_url: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    flush(redis_cluster_url)
    monkeypatch.setenv("REDIS_URL", redis_cluster_url)
    args = ["--repo", "acme/lumen", "--snapshot", str(EXAMPLES / "snapshot.json"),
            "--config", str(EXAMPLES / "prdigest.toml")]
    subscribed = CliRunner().invoke(cli, ["ask", "subscribe", "doc", *args])
    assert subscribed.exit_code == 0, subscribed.output
    stored = all_keys(sync_client(redis_cluster_url), "prdigest:v2:subscriptions:*")
    assert len(stored) == 1
    assert sync_client(redis_cluster_url).smembers(stored[0]) == {b"doc"}


async def test_healthz_is_ok_on_a_cluster(redis_cluster_url: str) -> None:
    async with serving(app_with(redis_url=redis_cluster_url)) as http:
        health = await http.get("/healthz")
    assert health.status_code == 200, health.text
    redis_state = health.json()["redis"]
    assert redis_state["ok"] is True
    masters = redis_state["cluster"]["masters"]
    assert sorted(masters) == sorted(redis_cluster_url.removeprefix("redis+cluster://").split(","))
    assert set(masters.values()) == {"ok"}


# --- a Redis user without scripting ---------------------------------------------------


async def test_without_eval_healthz_is_503_with_the_reason(redis_url: str) -> None:
    admin = sync_client(redis_url)
    admin.acl_setuser("noscript", enabled=True, passwords=["+pw"], keys=["*"],
                      channels=["*"], commands=["+@all", "-@scripting"])
    try:
        limited = redis_url.replace("redis://", "redis://noscript:pw@")
        async with serving(app_with(redis_url=limited)) as http:
            health = await http.get("/healthz")
        assert health.status_code == 503
        reason = health.json()["redis"]["reason"]
        assert "may not run scripts (EVAL)" in reason
        assert health.json()["scheduler"]["reason"] == reason
    finally:
        admin.acl_deluser("noscript")
        admin.close()


# --- a Sentinel failover under three schedulers ---------------------------------------


@pytest.fixture
def sentinel() -> Iterator[SentinelSet]:
    with private_sentinel() as started:
        yield started


@pytest.mark.redis
@pytest.mark.failover
async def test_a_failover_mid_run_loses_nothing_and_doubles_nothing(
    sentinel: SentinelSet
) -> None:
    from bot.delivery.due import due_runs
    from bot.delivery.schedule import Scheduler, ScheduleSettings

    channels = [{"platform": p, "id": f"{p}-{n}", "repo": "acme/lumen",
                 "timezone": "Asia/Shanghai", "schedule": "0 9 * * MON", "lang": "en",
                 "topics": []}
                for n in range(12) for p in ("slack", "telegram", "feishu")]
    config = make_config(channels)
    clock = HeldClock(MONDAY_9)
    platforms = FakePlatforms(clock)
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    url = sentinel.url + "?failover_seconds=20"
    clients = [RedisCoordination.from_url(url) for _ in range(3)]
    # Locks outlive the clients' failover window (20 s), as in production (60 s): a
    # replica whose post is in flight through the failover records it before anyone
    # may take the slot over, however long a loaded machine makes the failover.
    replicas = [Scheduler(Digests(config, CountingSource(snapshot)), client,
                          FakePoster(platforms, f"r{n}", latency=0.05),
                          ScheduleSettings(replica=f"r{n}", lock_seconds=30.0,
                                           build_lock_seconds=30.0, concurrency=2), clock=clock)
                for n, client in enumerate(clients)]
    slots = [run.slot for run in due_runs(config.channels, clock.now(), replicas[0].catch_up)]

    async def run(replica: Scheduler) -> None:
        ledger = replica.ledger
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                await replica.tick()
                entries = await ledger.get_many(slots)
                if all(e is not None and e.state == "posted" for e in entries):
                    return
            except StoreUnavailable:
                pass  # as run_forever: the next pass goes on
            await asyncio.sleep(0.1)
        raise AssertionError("not every slot was posted within 90 s")

    async def kill_when_a_third_is_out() -> int:
        while len(platforms.delivered) < len(channels) // 3:
            await asyncio.sleep(0.01)
        old = sentinel.kill_master()
        return await asyncio.to_thread(sentinel.wait_for_failover, old)

    try:
        killer = asyncio.create_task(kill_when_a_third_is_out())
        await asyncio.gather(*(run(r) for r in replicas))
        new_master = await killer
        entries = await Ledger(clients[0]).get_many(slots)
    finally:
        for client in clients:
            await client.close()
    assert new_master != sentinel.master_port
    assert all(e is not None and e.state == "posted" for e in entries)  # 0 lost
    counts = platforms.counts()
    assert len(counts) == len(channels)
    assert Counter(counts.values()) == {1: len(channels)}  # 0 duplicated


@pytest.mark.redis
@pytest.mark.failover
async def test_a_lock_no_replica_confirms_is_still_taken_and_logged(
    sentinel: SentinelSet, caplog: pytest.LogCaptureFixture
) -> None:
    """A stopped replica cannot confirm the lock's write within the WAIT: the lock is
    still taken (a master without a live replica keeps posting) and the log says a
    failover now could lose it; once the replica runs again, no warning."""
    import os
    import signal

    from bot.store.locks import Lock

    port = RedisCoordination.from_url(sentinel.url)
    replica = sentinel.procs.procs[sentinel.replica_port]
    try:
        os.kill(replica.pid, signal.SIGSTOP)
        try:
            with caplog.at_level("WARNING", logger="bot.store.redis.client"):
                assert await Lock(port.locks, "{t}:stalled", ttl_seconds=5).acquire()
        finally:
            os.kill(replica.pid, signal.SIGCONT)
        assert "no replica confirmed a write" in caplog.text
        caplog.clear()
        await asyncio.sleep(0.5)
        with caplog.at_level("WARNING", logger="bot.store.redis.client"):
            assert await Lock(port.locks, "{t}:healthy", ttl_seconds=5).acquire()
            assert not await Lock(port.locks, "{t}:healthy", ttl_seconds=5).acquire()
        assert "no replica confirmed" not in caplog.text
    finally:
        await port.close()


async def test_an_unreachable_cluster_is_a_redis_outage_not_a_crash() -> None:
    from bot.store.redis.cache import Cache
    from testkit.redis_server import free_port

    url = (f"redis+cluster://127.0.0.1:{free_port()}"
           "?socket_connect_timeout=0.2&failover_seconds=0")
    cache = Cache(sync_client(url))  # redis-py's connects at once; ours on first use
    assert cache.get_week("acme/lumen", "2026-W29", "Asia/Shanghai") is None  # a miss
    async with serving(app_with(redis_url=url)) as http:
        health = await http.get("/healthz")
        report = await http.get("/reports/acme/lumen?lang=en")
    assert health.status_code == 503 and health.json()["redis"]["ok"] is False
    assert report.status_code == 200  # the index lists the recent weeks without Redis


def test_a_post_s_lock_outlives_the_longest_failover_the_clients_wait_out() -> None:
    """Renewed every third of its life, the lock has two thirds left when a failover
    begins just before a renewal: the longest wait must fit in them, or another replica
    takes the slot over while the post waits for the new master."""
    from bot.store.ledger import POST_LOCK_SECONDS
    from bot.store.redis.client import MAX_FAILOVER_SECONDS

    assert POST_LOCK_SECONDS * 2 / 3 >= MAX_FAILOVER_SECONDS
    assert parse("redis+cluster://a:7000?failover_seconds=40").failover_seconds == 40
