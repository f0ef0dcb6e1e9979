"""A Redis that may evict prdigest's keys (every one of them expires, so `volatile-*`
policies evict them as `allkeys-*` do) or keeps nothing across a restart is named at
start: a warning by default, `prdigest serve` refusing to run on it with
`cache.unsafe_redis = "refuse"`."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from typer.testing import CliRunner

from bot.cli import app as cli_app
from bot.source import SnapshotSource
from bot.store.redis.client import async_client
from bot.store.redis.safety import hazards_of, redis_hazards
from bot.web.app import create_app
from testkit.redis_server import private_redis
from testkit.server_support import (
    CONFIG_PATH,
    clear_env,
    example_config,
    example_snapshot,
    serving,
)

EVICTS = "maxmemory-policy is allkeys-lru: Redis may evict prdigest's keys"


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


@pytest.fixture
def lru_redis() -> Iterator[str]:
    """A Redis as a cache is often run: LRU over every key, an append-only file."""
    with private_redis(appendonly=True) as url:
        client = redis.Redis.from_url(url)
        client.config_set("maxmemory-policy", "allkeys-lru")
        client.close()
        yield url


@pytest.mark.parametrize(("policy", "evicts"), [
    ("noeviction", False), ("allkeys-lru", True), ("volatile-lru", True),
    ("volatile-ttl", True), ("allkeys-random", True), ("volatile-lfu", True)])
def test_every_policy_but_noeviction_may_evict_prdigests_keys(policy: str, evicts: bool
                                                              ) -> None:
    found = hazards_of("", {"maxmemory_policy": policy}, {"aof_enabled": 1}, "3600 1")
    assert bool(found) is evicts
    if evicts:
        assert found[0].startswith(f"maxmemory-policy is {policy}:")


def test_persistence_is_off_only_without_both_the_file_and_snapshots() -> None:
    safe = {"maxmemory_policy": "noeviction"}
    assert hazards_of("", safe, {"aof_enabled": 1}, "") == []
    assert hazards_of("", safe, {"aof_enabled": 0}, "3600 1 300 100") == []
    off = hazards_of("10.0.0.5:6379", safe, {"aof_enabled": 0}, "")
    assert len(off) == 1 and off[0].startswith("persistence is off on 10.0.0.5:6379")
    # CONFIG refused (a managed Redis): snapshots cannot be told, so nothing is claimed.
    assert hazards_of("", safe, {"aof_enabled": 0}, None) == []


@pytest.mark.redis
async def test_starting_against_an_lru_redis_gives_the_documented_warning(
        lru_redis: str, caplog: pytest.LogCaptureFixture) -> None:
    app = create_app(example_config(), redis_url=lru_redis,
                     source=SnapshotSource(example_snapshot()), background=False)
    with caplog.at_level(logging.WARNING, logger="bot.store.redis.safety"):
        async with serving(app) as http:
            health = (await http.get("/healthz")).json()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"redis: {EVICTS}")
    assert "set maxmemory-policy noeviction" in warnings[0]
    assert '"Redis the way it must be run"' in warnings[0]  # where the docs say why
    assert health["redis"]["ok"] is True
    assert health["redis"]["hazards"] == [warnings[0].removeprefix("redis: ").split(
        " (docs/deployment.md")[0]]
    guide = (Path(__file__).parent.parent / "docs" / "deployment.md").read_text()
    assert "## Redis the way it must be run" in guide and "allkeys-lru" in guide


async def test_a_redis_without_persistence_is_named(redis_url: str) -> None:
    """The suite's own Redis runs without an append-only file or snapshots."""
    client = async_client(redis_url)
    try:
        found = await redis_hazards(client)
    finally:
        await client.aclose()
    assert [h.split(" (")[0] for h in found] == ["persistence is off"]


async def test_every_master_of_a_cluster_is_asked(redis_cluster_url: str) -> None:
    client = async_client(redis_cluster_url)
    try:
        found = await redis_hazards(client)
    finally:
        await client.aclose()
    assert len(found) == 3  # three masters, none with persistence
    assert all(h.startswith("persistence is off on 127.0.0.1:") for h in found)


@pytest.mark.redis
def test_serve_refuses_an_unsafe_redis_when_told_to(lru_redis: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text(CONFIG_PATH.read_text().replace(
        "[cache]\n", '[cache]\nunsafe_redis = "refuse"\n'))
    monkeypatch.setenv("REDIS_URL", lru_redis)
    result = CliRunner().invoke(cli_app, ["serve", "--config", str(config),
                                              "--port", "9"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"prdigest: error: redis: {EVICTS}")
    assert 'cache.unsafe_redis = "warn" starts anyway' in lines[0]
    assert lru_redis not in result.output


def test_unsafe_redis_takes_warn_or_refuse(tmp_path: Path) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text('[cache]\nunsafe_redis = "ignore"\n')
    result = CliRunner().invoke(cli_app, ["serve", "--config", str(config)])
    assert result.exit_code == 2
    assert "cache.unsafe_redis" in result.output and "warn" in result.output
