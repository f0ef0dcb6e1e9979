"""Locks across replicas: one holder at a time, lapsing on their own when it dies.

A `Lock` is held by one random token - the fencing token the delivery ledger's writes
carry (`bot.store.ledger`), so a holder that stalled past its lock's expiry cannot
write after another one took over. Its holder renews it in the background while it
works (`kept_alive`); `lost` turns True when a renewal or a fenced write finds the lock
gone or taken. The lock itself lives in the coordination port's `Locks`
(`bot.store.coordination`): Redis for replicas, memory for one process and the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator

from bot.clock import SYSTEM_CLOCK, Clock
from bot.store.coordination import Locks

log = logging.getLogger(__name__)


class Lock:
    """The lock at `key` of `locks`, lasting `ttl_seconds` unrenewed; waits on `clock`."""

    def __init__(self, locks: Locks, key: str, *, ttl_seconds: float,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.locks = locks
        self.key = key
        self.clock = clock
        self.ttl_ms = max(1, int(ttl_seconds * 1000))
        self.token = secrets.token_hex(16)
        self.held = False
        self.lost = False

    async def acquire(self) -> bool:
        self.held = await self.locks.acquire(self.key, self.token, self.ttl_ms)
        return self.held

    async def acquire_waiting(self, timeout: float, poll: float = 0.05) -> bool:
        """Acquire, waiting up to `timeout` seconds for the current holder."""
        deadline = self.clock.monotonic() + timeout
        while not await self.acquire():
            if self.clock.monotonic() >= deadline:
                return False
            await self.clock.sleep(poll)
        return True

    async def renew(self) -> bool:
        ok = await self.locks.renew(self.key, self.token, self.ttl_ms)
        if not ok:
            self.lost = True
        return ok

    async def release(self) -> None:
        if not self.held:
            return
        self.held = False
        try:
            await self.locks.release(self.key, self.token)
        except Exception as exc:  # it expires on its own; the work is done either way
            log.warning("could not release lock %s: %s", self.key, exc)

    @contextlib.asynccontextmanager
    async def kept_alive(self) -> AsyncIterator[Lock]:
        """Renew every third of the TTL while the body runs.

        The renewer is stopped by an event, not by cancelling it: redis-py's asyncio
        client can swallow a cancellation that lands inside a command (redis-py
        #2028, #2551 - reproduced with redis 8.1 on Python 3.11), which would leave
        a cancelled renewer running and its awaiter waiting for ever.
        """
        stop = asyncio.Event()
        interval = self.ttl_ms / 3000

        async def renew_until_stopped() -> None:
            while True:
                if await self.clock.wait(stop, interval):
                    return
                try:
                    if not await self.renew():
                        log.warning("lock %s was lost while held", self.key)
                        return
                except Exception as exc:
                    log.warning("could not renew lock %s: %s", self.key, exc)

        task = asyncio.create_task(renew_until_stopped())
        try:
            yield self
        finally:
            stop.set()
            # A renewal in flight finishes in one round trip; never wait much longer.
            await asyncio.wait([task], timeout=interval + 1.0)
