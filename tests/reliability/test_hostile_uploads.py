"""Large unsigned bodies cost the service no memory: every POST route refuses a body
over its cap before any signature check - by `Content-Length` before reading, chunked
as soon as the cap is passed - and eight parallel 48 MiB uploads to a running
`prdigest serve` leave its resident memory flat."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from testkit.reliability.harness import Service
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.uploads import POST_ROUTES, hostile_uploads
from testkit.reliability.world import World, write_config

GROWTH_LIMIT_MIB = 40
"""Eight bodies read up to their caps (1 MiB; 5 MiB for GitHub) and no further."""


@pytest.mark.parametrize("route", POST_ROUTES)
async def test_an_oversized_unsigned_body_is_refused_before_its_signature(
        service: Service, route: str) -> None:
    declared = await service.post(route, content=b"{" * (6 << 20))
    assert declared.status_code == 413

    async def chunks():  # type: ignore[no-untyped-def]
        for _ in range(200):
            yield b"{" * (64 << 10)

    chunked = await service.post(route, content=chunks())
    assert chunked.status_code == 413


def test_parallel_hostile_uploads_leave_the_memory_of_serve_flat(
        fakes: World, redis_url: str, tmp_path: Path) -> None:
    config = tmp_path / "prdigest.toml"
    write_config(config, fakes.urls())
    server = ServeProcess(config, fakes.env(redis_url), tmp_path / "serve.log").start()
    try:
        assert server.process is not None
        outcome = hostile_uploads(server.process.pid, server.port)
        assert set(outcome.statuses) <= {"413", "closed"}, outcome.statuses
        assert outcome.statuses[::2] == ("413",) * 4  # declared: refused before reading
        assert outcome.growth_mib < GROWTH_LIMIT_MIB, outcome
        assert outcome.sent_bytes < 8 * (48 << 20) / 2  # the rest was never taken
        assert httpx.get(f"{server.url}/healthz", timeout=5).status_code == 200
    finally:
        server.stop()
