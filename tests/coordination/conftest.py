"""The coordination port under test: each test here runs on the in-memory store and on
Redis as one server, a Cluster and a Sentinel-managed master (`STORES`)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio

from bot.store.coordination import Coordination
from bot.store.keys import Keys
from bot.store.memory import MemoryCoordination
from testkit.clock import VirtualClock

STORES = ("memory", "single", "cluster", "sentinel")
_URLS = {"single": "redis_server_url", "cluster": "redis_cluster_url",
         "sentinel": "redis_sentinel_url"}


@dataclass
class Store:
    """One store of the port, the names a test writes under, and how time passes on it:
    the virtual clock's for memory, Redis's own (real seconds) otherwise."""

    kind: str
    port: Coordination
    keys: Keys
    clock: VirtualClock | None

    async def elapse(self, seconds: float) -> None:
        if self.clock is not None:
            self.clock.advance(seconds)
        else:
            await asyncio.sleep(seconds)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" in metafunc.fixturenames:
        marks = {kind: [pytest.mark.redis] + ([pytest.mark.failover] if kind == "sentinel"
                                              else []) for kind in STORES if kind != "memory"}
        metafunc.parametrize("store", [pytest.param(kind, marks=marks.get(kind, ()), id=kind)
                                       for kind in STORES], indirect=True)


@pytest_asyncio.fixture(loop_scope="function")
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    kind = str(request.param)
    keys = Keys(f"contract:{secrets.token_hex(4)}")
    if kind == "memory":
        clock = VirtualClock()
        yield Store(kind, MemoryCoordination(clock), keys, clock)
        return
    from bot.store.redis.coordination import RedisCoordination

    url = str(request.getfixturevalue(_URLS[kind]))
    port = RedisCoordination.from_url(url, keys=keys)
    try:
        yield Store(kind, port, keys, None)
    finally:
        await port.close()
