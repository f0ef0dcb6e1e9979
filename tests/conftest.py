"""Shared fixtures: a private Redis, the example files, the real-data snapshots."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from testkit.redis_server import private_redis

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED_DATA = ROOT.parent / "shared" / "data"

# Clients must never reach a real proxy or host from the tests.
for _name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
    os.environ.pop(_name, None)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
os.environ.setdefault("PTB_TIMEDELTA", "true")


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    """One private redis-server for the whole run."""
    with private_redis() as url:
        yield url


@pytest.fixture
def redis_url(redis_server_url: str) -> Iterator[str]:
    """The private server, emptied before each test."""
    client = redis.Redis.from_url(redis_server_url)
    client.flushall()
    client.close()
    yield redis_server_url


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data`; tests marked `realdata` skip with a reason where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real PR snapshots not found at {SHARED_DATA}")
    return SHARED_DATA
