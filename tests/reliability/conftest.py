"""Fixtures: the fakes, the service in-process against them, every log record."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from testkit.reliability.harness import LogCapture, Service, capturing_logs, service_in_process
from testkit.reliability.world import World, world
from testkit.server_support import clear_env

__all__ = ["LogCapture", "Service", "apply_env"]


@pytest.fixture
def all_logs() -> Iterator[LogCapture]:
    """Captures DEBUG and up from every logger (the root and every library)."""
    with capturing_logs() as capture:
        yield capture


def apply_env(monkeypatch: pytest.MonkeyPatch, values: dict[str, str]) -> None:
    clear_env(monkeypatch)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def fakes() -> Iterator[World]:
    with world() as started:
        yield started


@pytest_asyncio.fixture(loop_scope="function")
async def service(fakes: World, redis_url: str, tmp_path: Path) -> AsyncIterator[Service]:
    """The whole service in-process against the fakes, with Redis."""
    async with service_in_process(fakes, redis_url, tmp_path) as running:
        yield running
