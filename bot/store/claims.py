"""Set-once keys with expiry: one primitive for every "only the first one does it".

An inbound chat delivery is answered once across the platform's retries (`first`), a
GitHub delivery is handled once, a merged-PR notice goes to a channel once, one
replica polls a repository per interval. The claims live in the coordination port's
`ClaimStore` (`bot.store.coordination`): in Redis they are shared by replicas; without
Redis the in-memory store gives the same answers to one replica.

Work that must not be lost when the process dies halfway is claimed in two steps
(`begin`, then `finish` once it is done): the claim names its owner, and each process
keeps a short-lived "alive" mark in the store while it runs. A later attempt that finds a
claim whose owner is no longer alive (SIGKILLed before finishing) takes it over, so a
retry after a crash is answered once instead of never. A take-over keeps the claim's
expiry, so what is left of it tells when the work first began (across take-overs),
and the taker can ask the platform whether the dead owner's post arrived after all
(`Begun.in_doubt_since`).

A claim another process holds unfinished while its alive mark stands is neither free
nor done: that process may be at it, or may have died a moment ago with its mark not
yet lapsed. `try_begin` says so (`Held.ELSEWHERE`), so a delivery that finds it is
answered "send it again later" and never acknowledged as a repeat. The outcome of work
(`finish`, `release`) that cannot be written while the store is away is kept in this
process and written by the next call that reaches it (the alive mark's refresh among
them), so a failed piece of work does not stay claimed by a live process.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

from bot.clock import SYSTEM_CLOCK, Clock
from bot.models import Admission
from bot.store.coordination import Coordination, StoreUnavailable
from bot.store.keys import Keys

SEEN_TTL_SECONDS = 24 * 3600
"""How long an inbound delivery is remembered: platforms retry within minutes."""

UNSETTLED_KEPT = 100_000
"""Outcomes this process keeps while the store is away before it forgets the oldest."""

ALIVE_SECONDS = 10.0
"""How long a process's alive mark outlives its last refresh: a claim left by a
process dead this long is taken over. Refreshed every third of it."""

_PENDING = b"pending:"
_DONE = b"done"

log = logging.getLogger(__name__)


class Held(Enum):
    """Why `try_begin` did not grant a claim."""

    DONE = "done"
    """The work was finished: a repeat."""
    HERE = "here"
    """This process is doing the work now: a repeat."""
    ELSEWHERE = "elsewhere"
    """Another process began it and is not known to have stopped: it may finish it or
    may have died a moment ago, so ask again later (its mark lapses within
    `ALIVE_SECONDS` of its death, and the claim is then taken over)."""


_FREE = -1
"""`Claims._unsettled` value of a release not yet written (else: a finish's ttl, ms)."""


@dataclass(frozen=True)
class Begun:
    """A claim `begin_work` granted. `in_doubt_since` is when an owner that died before
    `finish` began the same work - it may have been done, so look before doing it
    again; None for a fresh claim."""

    in_doubt_since: datetime | None = None


class Claims:
    """`claim` is True for the first caller only, until the TTL passes; `release` undoes
    it when the claimed work failed, so a later attempt may try again. `get`/`put`/
    `forget` keep small values (a poller's ETag) under the same names."""

    def __init__(self, port: Coordination, *, seen_ttl_seconds: int = SEEN_TTL_SECONDS,
                 alive_seconds: float = ALIVE_SECONDS, clock: Clock = SYSTEM_CLOCK) -> None:
        self.port = port
        self.store = port.claims
        self.clock = clock
        self.keys: Keys = port.keys
        self.seen_ttl_seconds = seen_ttl_seconds
        self.alive_seconds = alive_seconds
        self.owner = secrets.token_hex(8)
        self._alive_until = float("-inf")
        # Claims begun here and not yet finished or released: a repeat that reaches
        # this process while it works is one (`Held.HERE`).
        self._working: set[str] = set()
        # Outcomes the store could not be told yet, by claim name: `_FREE` for a
        # release, else the milliseconds a finish keeps the claim.
        self._unsettled: dict[str, int] = {}
        self._settling = asyncio.Lock()

    # --- inbound deliveries (`bot.chat.inbound.FirstSeen`) -------------------------

    async def first(self, platform: str, delivery: str) -> Admission:
        """Begin answering an inbound delivery: "answer" when this process now holds it,
        "repeat" when it was answered or is being answered here, "later" when another
        process began it and may be gone (the platform should send it again)."""
        got = await self.try_begin(Keys.seen(platform, delivery), self.seen_ttl_seconds)
        if isinstance(got, Begun):
            return "answer"
        return "later" if got is Held.ELSEWHERE else "repeat"

    async def answered(self, platform: str, delivery: str) -> None:
        """The answer was sent: retries are repeats from now on."""
        await self.finish(Keys.seen(platform, delivery), self.seen_ttl_seconds)

    async def unanswered(self, platform: str, delivery: str) -> None:
        """The answer could not be sent: a retry may answer."""
        await self.release(Keys.seen(platform, delivery))

    # --- work in two steps -----------------------------------------------------------

    async def begin(self, key: str, ttl_seconds: float) -> bool:
        """Claim work owned by this process: True for the first caller, and for a later
        one when the claim's owner died before `finish`."""
        return await self.begin_work(key, ttl_seconds) is not None

    async def begin_work(self, key: str, ttl_seconds: float) -> Begun | None:
        """`try_begin`, with every refusal as None."""
        got = await self.try_begin(key, ttl_seconds)
        return got if isinstance(got, Begun) else None

    async def try_begin(self, key: str, ttl_seconds: float) -> Begun | Held:
        """Claim work owned by this process: a `Begun` for the first caller and for a
        later one when the claim's owner died before `finish` (its work may have been
        done: `in_doubt_since`); otherwise why not. When the work began is told by the
        claim's expiry: every begin of `key` passes the same `ttl_seconds`."""
        name = self.keys.claim(key)
        if name in self._working:
            return Held.HERE
        if self._unsettled.get(name, _FREE) != _FREE:
            await self._settle()
            return Held.DONE  # finished here; the store may not have been told yet
        await self._settle()
        await self._keep_alive()
        mine = _PENDING + self.owner.encode()
        px = max(int(ttl_seconds * 1000), 1)
        for _ in range(2):  # a second go when the claim lapsed between SET and GET
            if await self.store.claim(name, mine, px):
                return self._granted(name, Begun())
            held = await self.store.get(name)
            if held is not None:
                return await self._held_by(name, key, held, mine, px)
        return Held.ELSEWHERE

    async def _held_by(self, name: str, key: str, held: bytes, mine: bytes,
                       px: int) -> Begun | Held:
        """What a claim found taken means: done, this process's, another's at work, or
        a dead owner's to take over."""
        if not held.startswith(_PENDING):
            return Held.DONE
        if held == mine:
            if name in self._working:
                return Held.HERE
            # Released here but the store not told yet: not done, ask again later. Else
            # finished here (the store being told) or neither at work nor released:
            # only a repeat explains it (never twice).
            return Held.ELSEWHERE if self._unsettled.get(name) == _FREE else Held.DONE
        owner = held[len(_PENDING):].decode(errors="replace")
        if await self.store.exists(self._alive_name(owner)):
            return Held.ELSEWHERE
        left = await self.store.take_over(name, held, mine, px)
        if left <= 0:
            return Held.ELSEWHERE  # another taker won; it may still fail
        log.info("claim %s taken over from %s, which stopped before finishing", key, owner)
        elapsed = timedelta(milliseconds=px - left)
        return self._granted(name, Begun(in_doubt_since=self.clock.now() - elapsed))

    def _granted(self, name: str, begun: Begun) -> Begun:
        self._working.add(name)
        return begun

    async def finish(self, key: str, ttl_seconds: float) -> None:
        """The work claimed by `begin` is done: the claim stays, ownerless, for ttl.
        When the store cannot be told now, it is told by the next call that reaches it."""
        name = self.keys.claim(key)
        self._working.discard(name)
        self._unsettle(name, max(int(ttl_seconds * 1000), 1))
        await self._settle()

    async def release(self, key: str) -> None:
        """Undo a claim whose work failed, so a later attempt may try again. When the
        store cannot be told now, it is told by the next call that reaches it; until
        then a repeat reaching this process is not answered as one."""
        name = self.keys.claim(key)
        self._working.discard(name)
        self._unsettle(name, _FREE)
        await self._settle()

    def _unsettle(self, name: str, outcome: int) -> None:
        self._unsettled.pop(name, None)
        self._unsettled[name] = outcome
        if len(self._unsettled) > UNSETTLED_KEPT:
            lost = next(iter(self._unsettled))
            self._unsettled.pop(lost)
            log.warning("claims: too many outcomes waiting for the store; %s left to its "
                        "expiry", lost)

    async def _settle(self) -> None:
        """Write the outcomes the store could not be told before, oldest first; stop at
        the first failure (the store is still away) and keep the rest. One writer at a
        time, so a release is never written after the claim was begun again."""
        if not self._unsettled:
            return
        mine = _PENDING + self.owner.encode()
        async with self._settling:
            for name, outcome in list(self._unsettled.items()):
                if self._unsettled.get(name) != outcome:
                    continue  # written meanwhile
                try:
                    if outcome == _FREE:
                        await self.store.release(name, mine)
                    else:
                        await self.store.put(name, _DONE, ttl_ms=outcome)
                except StoreUnavailable as exc:
                    log.warning("claims: %d outcome(s) not written yet (%s); kept for "
                                "the next call", len(self._unsettled), exc.reason)
                    return
                if self._unsettled.get(name) == outcome:
                    del self._unsettled[name]

    async def keep_alive(self, stop: asyncio.Event) -> None:
        """Refresh this process's alive mark until `stop` (the server runs it)."""
        while not stop.is_set():
            try:
                await self._keep_alive(force=True)
                await self._settle()
            except StoreUnavailable as exc:
                log.warning("claims: alive mark not refreshed: %s", exc.reason)
            await self.clock.wait(stop, self.alive_seconds / 3)

    async def _keep_alive(self, *, force: bool = False) -> None:
        now = self.clock.monotonic()
        if not force and now < self._alive_until - self.alive_seconds * 2 / 3:
            return
        await self.store.put(self._alive_name(self.owner), b"1",
                             ttl_ms=max(int(self.alive_seconds * 1000), 1))
        self._alive_until = now + self.alive_seconds

    def _alive_name(self, owner: str) -> str:
        return self.keys.claim(Keys.alive(owner))

    # --- set-once ----------------------------------------------------------------------

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        return await self.store.claim(self.keys.claim(key), b"1",
                                      max(int(ttl_seconds * 1000), 1))

    async def get(self, key: str) -> str | None:
        raw = await self.store.get(self.keys.claim(key))
        return None if raw is None else raw.decode()

    async def put(self, key: str, value: str, *, only_new: bool = False) -> None:
        await self.store.put(self.keys.claim(key), value.encode(), only_new=only_new)

    async def forget(self, key: str) -> None:
        await self.store.delete(self.keys.claim(key))
