"""The coordination port as tests need it: in memory on a virtual clock, and wrapped so
that a replica's store goes away on cue.

`memory_port(clock)` is what every test of the exactly-once core runs on (the contract
suite, `tests/coordination/`, holds Redis to the same behaviour). `GuardedPort(port,
guard)` passes every call to `port` after `guard(step, args)`, which may raise:
`StoreDown` is a store outage (`FlakyPort`: down when told, or at the first step naming
a key that holds `down_on`), `ReplicaKilled` a SIGKILLed replica (`testkit.schedule`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from bot.store.claims import Claims
from bot.store.coordination import Coordination, StoreHealth, StoreUnavailable
from bot.store.memory import MemoryCoordination
from testkit.clock import VirtualClock

Guard = Callable[[str, tuple[Any, ...]], None]


def memory_port(clock: VirtualClock | None = None) -> MemoryCoordination:
    """A store of the port in memory, expiring on `clock` (a new virtual one if none),
    standing for the store replicas share: the replicas a test runs in one process share
    this one object."""
    return MemoryCoordination(clock or VirtualClock(), shared=True)


class StoreDown(StoreUnavailable):
    """What a store that went away (as injected) raises."""

    def __init__(self) -> None:
        super().__init__("ConnectionError", "the store is down (injected)")


class _Guarded:
    """One store of the port, each call guarded."""

    def __init__(self, inner: Any, guard: Guard) -> None:
        self._inner = inner
        self._guard = guard

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if not callable(target):
            return target
        guard = self._guard

        async def call(*args: Any, **kwargs: Any) -> Any:
            guard(name, (*args, *kwargs.values()))
            return await target(*args, **kwargs)

        return call


class GuardedPort:
    """`inner`, every call of its stores passed through `guard` first."""

    def __init__(self, inner: Coordination, guard: Guard) -> None:
        self.inner = inner
        self.shared = inner.shared
        self.keys = inner.keys
        self.locks: Any = _Guarded(inner.locks, guard)
        self.ledger: Any = _Guarded(inner.ledger, guard)
        self.claims: Any = _Guarded(inner.claims, guard)
        self.lanes: Any = _Guarded(inner.lanes, guard)
        self.values: Any = _Guarded(inner.values, guard)
        self.batches: Any = _Guarded(inner.batches, guard)
        self._guard = guard

    async def problem(self) -> str | None:
        return await self.inner.problem()

    async def hazards(self) -> list[str]:
        return await self.inner.hazards()

    async def health(self, timeout: float) -> StoreHealth:
        try:
            self._guard("health", ())
        except StoreUnavailable as exc:
            return StoreHealth(ok=False, error=exc.reason)
        return await self.inner.health(timeout)

    async def close(self) -> None:
        await self.inner.close()


class FlakyPort(GuardedPort):
    """`inner` until it is `down`: then every call raises `StoreDown`. It goes down when
    told, or at the first call naming a key that holds `down_on` once `passing` such
    calls went through; it comes back when told (`down = False`). `refused` lists the
    steps refused."""

    def __init__(self, inner: Coordination, *, down_on: str | None = None,
                 passing: int = 0) -> None:
        super().__init__(inner, self._check)
        self.down = False
        self.down_on = down_on
        self.passing = passing
        self.refused: list[str] = []

    def _check(self, step: str, args: tuple[Any, ...]) -> None:
        if self.down_on is not None and any(self.down_on in _text(arg) for arg in args):
            if self.passing > 0:
                self.passing -= 1
            else:
                self.down, self.down_on = True, None
        if self.down:
            self.refused.append(step)
            raise StoreDown()


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, (list, tuple)):
        return " ".join(map(_text, value))
    return value if isinstance(value, str) else ""


async def settle(steps: int = 50) -> None:
    """Let the event loop run the tasks that are ready (background work a test started)
    without letting any time pass."""
    for _ in range(steps):
        await asyncio.sleep(0)



@contextlib.asynccontextmanager
async def in_memory(clock: VirtualClock | None = None) -> AsyncIterator[MemoryCoordination]:
    """`memory_port(clock)`, closed after."""
    port = memory_port(clock)
    try:
        yield port
    finally:
        await port.close()


def local_claims() -> Claims:
    """Claims of one process alone (a store in its memory), as a replica without Redis
    keeps them."""
    return Claims(MemoryCoordination())


def claims_on(port: Coordination, **options: Any) -> Claims:
    """A process's Claims on `port`, timed by the port's own clock when it keeps one (the
    in-memory store's), so its alive mark is refreshed in the time it lapses in."""
    clock = getattr(port, "clock", None)
    return Claims(port, **options) if clock is None else Claims(port, clock=clock, **options)
