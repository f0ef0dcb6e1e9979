"""The shared connection pool: one session per event loop, and a session made on one
loop closed on that loop when another takes its place or the pool is closed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import aiohttp
import pytest

from adapters.http import Pool


@pytest.fixture
def other_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own (as Feishu's long connection's)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def _made_on(loop: asyncio.AbstractEventLoop, pool: Pool) -> aiohttp.ClientSession:
    async def make() -> aiohttp.ClientSession:
        return pool.session()

    return asyncio.run_coroutine_threadsafe(make(), loop).result(5)


async def _closed_soon(session: aiohttp.ClientSession) -> bool:
    for _ in range(100):
        if session.closed:
            return True
        await asyncio.sleep(0.01)
    return False


async def test_a_loop_reuses_its_session_until_the_pool_is_closed() -> None:
    pool = Pool(4)
    first = pool.session()
    assert pool.session() is first
    await pool.close()
    assert first.closed and pool.current is None
    again = pool.session()
    assert again is not first and not again.closed
    await pool.close()


async def test_another_loops_session_is_closed_on_its_loop_when_replaced(
        other_loop: asyncio.AbstractEventLoop) -> None:
    pool = Pool(4)
    theirs = _made_on(other_loop, pool)
    mine = pool.session()
    assert mine is not theirs
    assert await _closed_soon(theirs)  # closed on the loop it was made on, not left open
    await pool.close()
    assert mine.closed


async def test_closing_the_pool_from_another_loop_closes_the_session_on_its_own(
        other_loop: asyncio.AbstractEventLoop) -> None:
    pool = Pool(4)
    theirs = _made_on(other_loop, pool)
    await pool.close()
    assert pool.current is None
    assert await _closed_soon(theirs)
