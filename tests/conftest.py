"""Shared fixtures: a private Redis, the example files, the real-data snapshots, the
service with its GitHub webhook on."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

from bot.store.memory import MemoryCoordination
from testkit.coordination import memory_port
from testkit.fakes.openai import FakeOpenAI
from testkit.redis_server import private_redis
from testkit.redis_topologies import flush, private_cluster, private_sentinel
from testkit.shared_data import shared_data_dir

if TYPE_CHECKING:
    from bot.models import Snapshot

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED_DATA = shared_data_dir()

# Clients must never reach a real proxy or host from the tests.
for _name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
    os.environ.pop(_name, None)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
os.environ.setdefault("PTB_TIMEDELTA", "true")

# Property tests check behaviour, not speed: a loaded CI machine must not fail an example
# for taking longer than Hypothesis's default 200 ms (speed is measured under bench/).
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    """One private redis-server for the whole run."""
    with private_redis() as url:
        yield url


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """One private 3-node Redis Cluster for the whole run (started on first use)."""
    with private_cluster() as url:
        yield url


REDIS_FIXTURES = {"redis_url", "redis_server_url", "redis_cluster_url", "redis_sentinel_url"}


LONG_FIRST = ("realmodel", "kills", "failover", "slow")
"""Markers of the tests that take longest, in the order they are started: a parallel
run hands tests out in collection order, so one of them started last would leave the
other workers idle while it alone runs; started first, the short tests fill around it."""


def _start_rank(item: pytest.Item) -> int:
    names = {mark.name for mark in item.iter_markers()}
    return next((rank for rank, name in enumerate(LONG_FIRST) if name in names),
                len(LONG_FIRST))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that reaches a private Redis (through any fixture) is marked `redis`; the
    longest tests are started first (`LONG_FIRST`), each group in its collected order."""
    for item in items:
        if REDIS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.redis)
    items.sort(key=_start_rank)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module that sets `REDIS_TOPOLOGIES = ("single", "cluster")` runs each of its
    Redis tests on one server and again on a real Redis Cluster."""
    if "redis_topology" in metafunc.fixturenames:
        topologies = getattr(metafunc.module, "REDIS_TOPOLOGIES", ("single",))
        metafunc.parametrize("redis_topology", topologies, indirect=True)


@pytest.fixture
def redis_topology(request: pytest.FixtureRequest) -> str:
    return str(getattr(request, "param", "single"))


@pytest.fixture
def redis_url(redis_topology: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """The private server (or cluster), emptied before each test."""
    name = "redis_cluster_url" if redis_topology == "cluster" else "redis_server_url"
    url = str(request.getfixturevalue(name))
    flush(url)
    yield url


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data` (or $PRDIGEST_SHARED_DATA); tests marked `realdata` skip with a
    reason where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real PR snapshots not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def webhook_app(redis_url: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The service on the example files with the GitHub webhook on and recording
    adapters: (the app, its adapters by platform)."""
    from testkit.server_support import webhook_service

    with webhook_service(redis_url) as built:
        yield built


@pytest.fixture(scope="module")
def snapshot() -> Snapshot:
    """The example snapshot (acme/lumen, its weeks 2026-W28 and W29)."""
    from testkit.server_support import example_snapshot

    return example_snapshot()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    """A fake model endpoint for the narrator tests of one module."""
    with FakeOpenAI(stall_seconds=5) as server:
        yield server


@pytest.fixture(scope="session")
def redis_sentinel_url() -> Iterator[str]:
    """One private Sentinel set (a master, its replica, a Sentinel) for the whole run,
    started on first use; no test fails it over (those start their own)."""
    with private_sentinel() as sentinel:
        yield sentinel.url


@pytest.fixture
def port() -> MemoryCoordination:
    """The coordination port in memory (on a virtual clock), shared by every replica a
    test runs; the contract suite holds Redis to the same behaviour."""
    return memory_port()
