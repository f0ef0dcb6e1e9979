"""Set-once keys with expiry: one primitive for every "only the first one does it".

An inbound chat delivery is answered once across the platform's retries (`first`), a
GitHub delivery is handled once, a merged-PR notice goes to a channel once, one
replica polls a repository per interval. In Redis the claims are shared by replicas;
without Redis a bounded memory in this process gives the same answers to one replica.

Work that must not be lost when the process dies halfway is claimed in two steps
(`begin`, then `finish` once it is done): the claim names its owner, and each process
keeps a short-lived "alive" mark in Redis while it runs. A later attempt that finds a
claim whose owner is no longer alive (SIGKILLed before finishing) takes it over, so a
retry after a crash is answered once instead of never. A take-over keeps the claim's
expiry, so what is left of it tells when the work first began (across take-overs),
and the taker can ask the platform whether the dead owner's post arrived after all
(`Begun.in_doubt_since`).

A claim another process holds unfinished while its alive mark stands is neither free
nor done: that process may be at it, or may have died a moment ago with its mark not
yet lapsed. `try_begin` says so (`Held.ELSEWHERE`), so a delivery that finds it is
answered "send it again later" and never acknowledged as a repeat. The outcome of work
(`finish`, `release`) that cannot be written while Redis is away is kept in this
process and written by the next call that reaches Redis (the alive mark's refresh
among them), so a failed piece of work does not stay claimed by a live process.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.clock import SYSTEM_CLOCK, Clock
from bot.models import Admission
from bot.store.client import REDIS_ERRORS
from bot.store.keys import KEY_PREFIX, Keys

SEEN_TTL_SECONDS = 24 * 3600
"""How long an inbound delivery is remembered: platforms retry within minutes."""

LOCAL_CLAIMS = 100_000
"""How many claims the in-process memory keeps before forgetting the oldest."""

ALIVE_SECONDS = 10.0
"""How long a process's alive mark outlives its last refresh: a claim left by a
process dead this long is taken over. Refreshed every third of it."""

_PENDING = b"pending:"
_DONE = b"done"
# Replace the claim only if it still holds the dead owner's value (one taker wins),
# keeping its expiry; the milliseconds left of it, 0 when another taker won.
_TAKE_OVER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local left = redis.call('PTTL', KEYS[1])
  if left <= 0 then left = tonumber(ARGV[3]) end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', left)
  return left
end
return 0
"""
# Delete the claim only while it still holds this owner's pending value: a claim taken
# over meanwhile (this process's mark lapsed during an outage) is the taker's.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

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

    def __init__(self, client: aioredis.Redis | None, *, prefix: str = KEY_PREFIX,
                 seen_ttl_seconds: int = SEEN_TTL_SECONDS,
                 alive_seconds: float = ALIVE_SECONDS, clock: Clock = SYSTEM_CLOCK) -> None:
        self.client = client
        self.clock = clock
        self.keys = Keys(prefix)
        self.seen_ttl_seconds = seen_ttl_seconds
        self.alive_seconds = alive_seconds
        self.owner = secrets.token_hex(8)
        self._alive_until = 0.0
        self._local: dict[str, float] = {}
        self._values: dict[str, str] = {}
        # Claims begun here and not yet finished or released: a repeat that reaches
        # this process while it works is one (`Held.HERE`).
        self._working: set[str] = set()
        # Outcomes Redis could not be told yet, by claim name: `_FREE` for a release,
        # else the milliseconds a finish keeps the claim.
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
        if self.client is None:
            return self._granted(name, Begun()) if await self.claim(key, ttl_seconds) \
                else Held.DONE
        if self._unsettled.get(name, _FREE) != _FREE:
            await self._settle()
            return Held.DONE  # finished here; Redis may not have been told yet
        await self._settle()
        await self._keep_alive()
        mine = _PENDING + self.owner.encode()
        px = max(int(ttl_seconds * 1000), 1)
        for _ in range(2):  # a second go when the claim lapsed between SET and GET
            if await self.client.set(name, mine, nx=True, px=px):
                return self._granted(name, Begun())
            held = await self.client.get(name)
            if held is not None:
                return await self._held_by(name, key, held, mine, px)
        return Held.ELSEWHERE

    async def _held_by(self, name: str, key: str, held: object, mine: bytes,
                       px: int) -> Begun | Held:
        """What a claim found taken means: done, this process's, another's at work, or
        a dead owner's to take over."""
        assert self.client is not None
        if not isinstance(held, bytes) or not held.startswith(_PENDING):
            return Held.DONE
        if held == mine:
            if name in self._working:
                return Held.HERE
            # Released here but Redis not told yet: not done, ask again later. Else
            # finished here (Redis being told) or neither at work nor released: only a
            # repeat explains it (never twice).
            return Held.ELSEWHERE if self._unsettled.get(name) == _FREE else Held.DONE
        owner = held[len(_PENDING):].decode(errors="replace")
        if await self.client.exists(self._alive_name(owner)):
            return Held.ELSEWHERE
        left = int(await self.client.eval(_TAKE_OVER, 1, name, held, mine, px))
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
        When Redis cannot be told now, it is told by the next call that reaches it."""
        name = self.keys.claim(key)
        self._working.discard(name)
        if self.client is None:
            return
        self._unsettle(name, max(int(ttl_seconds * 1000), 1))
        await self._settle()

    async def release(self, key: str) -> None:
        """Undo a claim whose work failed, so a later attempt may try again. When Redis
        cannot be told now, it is told by the next call that reaches it; until then a
        repeat reaching this process is not answered as one."""
        name = self.keys.claim(key)
        self._working.discard(name)
        if self.client is None:
            self._local.pop(name, None)
            return
        self._unsettle(name, _FREE)
        await self._settle()

    def _unsettle(self, name: str, outcome: int) -> None:
        self._unsettled.pop(name, None)
        self._unsettled[name] = outcome
        if len(self._unsettled) > LOCAL_CLAIMS:
            lost = next(iter(self._unsettled))
            self._unsettled.pop(lost)
            log.warning("claims: too many outcomes waiting for Redis; %s left to its "
                        "expiry", lost)

    async def _settle(self) -> None:
        """Write the outcomes Redis could not be told before, oldest first; stop at the
        first failure (Redis is still away) and keep the rest. One writer at a time, so
        a release is never written after the claim was begun again."""
        if not self._unsettled:
            return
        assert self.client is not None
        mine = _PENDING + self.owner.encode()
        async with self._settling:
            for name, outcome in list(self._unsettled.items()):
                if self._unsettled.get(name) != outcome:
                    continue  # written meanwhile
                try:
                    if outcome == _FREE:
                        await self.client.eval(_RELEASE, 1, name, mine)
                    else:
                        await self.client.set(name, _DONE, px=outcome)
                except REDIS_ERRORS as exc:
                    log.warning("claims: %d outcome(s) not written yet (%s); kept for "
                                "the next call", len(self._unsettled), type(exc).__name__)
                    return
                if self._unsettled.get(name) == outcome:
                    del self._unsettled[name]

    async def keep_alive(self, stop: asyncio.Event) -> None:
        """Refresh this process's alive mark until `stop` (the server runs it)."""
        while not stop.is_set():
            try:
                await self._keep_alive(force=True)
                await self._settle()
            except (RedisError, OSError) as exc:
                log.warning("claims: alive mark not refreshed: %s", type(exc).__name__)
            await self.clock.wait(stop, self.alive_seconds / 3)

    async def _keep_alive(self, *, force: bool = False) -> None:
        assert self.client is not None
        now = self.clock.monotonic()
        if not force and now < self._alive_until - self.alive_seconds * 2 / 3:
            return
        await self.client.set(self._alive_name(self.owner), b"1",
                              px=max(int(self.alive_seconds * 1000), 1))
        self._alive_until = now + self.alive_seconds

    def _alive_name(self, owner: str) -> str:
        return self.keys.claim(Keys.alive(owner))

    # --- set-once ----------------------------------------------------------------------

    async def claim(self, key: str, ttl_seconds: float) -> bool:
        name = self.keys.claim(key)
        if self.client is None:
            now = self.clock.monotonic()
            if self._local.get(name, 0.0) > now:
                return False
            self._local.pop(name, None)
            self._local[name] = now + ttl_seconds
            if len(self._local) > LOCAL_CLAIMS:
                self._local.pop(next(iter(self._local)))
            return True
        return bool(await self.client.set(name, b"1", nx=True,
                                          px=max(int(ttl_seconds * 1000), 1)))

    async def get(self, key: str) -> str | None:
        name = self.keys.claim(key)
        if self.client is None:
            return self._values.get(name)
        raw = await self.client.get(name)
        return raw.decode() if isinstance(raw, bytes) else raw

    async def put(self, key: str, value: str, *, only_new: bool = False) -> None:
        name = self.keys.claim(key)
        if self.client is None:
            if not (only_new and name in self._values):
                self._values[name] = value
            return
        await self.client.set(name, value.encode(), nx=only_new)

    async def forget(self, key: str) -> None:
        name = self.keys.claim(key)
        if self.client is None:
            self._values.pop(name, None)
            return
        await self.client.delete(name)
