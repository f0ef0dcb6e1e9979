"""Shared fixtures: a private Redis, the example files, the real-data snapshots."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.fakes.openai import FakeOpenAI
from testkit.redis_server import private_redis
from testkit.redis_topologies import flush, private_cluster

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


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """One private 3-node Redis Cluster for the whole run (started on first use)."""
    with private_cluster() as url:
        yield url


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
    """`../shared/data`; tests marked `realdata` skip with a reason where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real PR snapshots not found at {SHARED_DATA}")
    return SHARED_DATA


def service_variables() -> set[str]:
    """Every environment variable `prdigest serve` reads a secret or setting from: the
    config's `*_env` defaults, the GitHub App's, the report and metrics secrets."""
    import msgspec

    from bot.config import Config, LLMConfig
    from bot.github import app
    from bot.links import REPORT_SECRET_ENV
    from bot.web.health import METRICS_TOKEN_ENV

    config = Config()
    sections = (config.github, config.cache, config.platforms.slack,
                config.platforms.telegram, config.platforms.feishu,
                LLMConfig(base_url="http://x", model="m"))
    named = {getattr(s, f.name) for s in sections for f in msgspec.structs.fields(s)
             if f.name.endswith("_env")}
    return named | {app.APP_ID_ENV, app.PRIVATE_KEY_ENV, app.PRIVATE_KEY_FILE_ENV,
                    app.INSTALLATION_ID_ENV, REPORT_SECRET_ENV, METRICS_TOKEN_ENV}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    """A fake model endpoint for the narrator tests of one module."""
    with FakeOpenAI(stall_seconds=5) as server:
        yield server
