"""The report pages served under uvicorn for the browser tests."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import uvicorn

from bot.source import SnapshotSource
from bot.web.app import create_app
from testkit.server_support import clear_env, clock, example_config, example_snapshot


@pytest_asyncio.fixture(loop_scope="function")
async def base_url(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """The app under uvicorn on 127.0.0.1:<free port>, in this test's own event loop
    (a fixture in the session's loop would not be served while the test awaits)."""
    clear_env(monkeypatch)
    app = create_app(example_config(), source=SnapshotSource(example_snapshot()), clock=clock(),
                     background=False)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[listener]))
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.02)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        listener.close()
