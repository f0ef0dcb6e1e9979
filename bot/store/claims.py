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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis
from redis.exceptions import RedisError

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

log = logging.getLogger(__name__)


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
                 alive_seconds: float = ALIVE_SECONDS) -> None:
        self.client = client
        self.keys = Keys(prefix)
        self.seen_ttl_seconds = seen_ttl_seconds
        self.alive_seconds = alive_seconds
        self.owner = secrets.token_hex(8)
        self._alive_until = 0.0
        self._local: dict[str, float] = {}
        self._values: dict[str, str] = {}

    # --- inbound deliveries (`bot.chat.inbound.FirstSeen`) -------------------------

    async def first(self, platform: str, delivery: str) -> bool:
        """Begin answering an inbound delivery; False when it was answered before or is
        being answered by a live process."""
        return await self.begin(Keys.seen(platform, delivery), self.seen_ttl_seconds)

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
        """`begin`, telling a fresh claim from one taken over from a dead owner (whose
        work may have been done); None when the claim is not this process's. When the
        work began is told by the claim's expiry: every begin of `key` passes the same
        `ttl_seconds`."""
        if self.client is None:
            return Begun() if await self.claim(key, ttl_seconds) else None
        name = self.keys.claim(key)
        mine = _PENDING + self.owner.encode()
        await self._keep_alive()
        px = max(int(ttl_seconds * 1000), 1)
        if await self.client.set(name, mine, nx=True, px=px):
            return Begun()
        held = await self.client.get(name)
        if not isinstance(held, bytes) or not held.startswith(_PENDING) or held == mine:
            return None
        owner = held[len(_PENDING):].decode(errors="replace")
        if await self.client.exists(self._alive_name(owner)):
            return None
        left = int(await self.client.eval(_TAKE_OVER, 1, name, held, mine, px))
        if left <= 0:
            return None
        log.info("claim %s taken over from %s, which stopped before finishing", key, owner)
        elapsed = timedelta(milliseconds=px - left)
        return Begun(in_doubt_since=datetime.now(UTC) - elapsed)

    async def finish(self, key: str, ttl_seconds: float) -> None:
        """The work claimed by `begin` is done: the claim stays, ownerless, for ttl."""
        if self.client is None:
            return
        await self.client.set(self.keys.claim(key), _DONE,
                              px=max(int(ttl_seconds * 1000), 1))

    async def keep_alive(self, stop: asyncio.Event) -> None:
        """Refresh this process's alive mark until `stop` (the server runs it)."""
        while not stop.is_set():
            try:
                await self._keep_alive(force=True)
            except (RedisError, OSError) as exc:
                log.warning("claims: alive mark not refreshed: %s", type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.alive_seconds / 3)

    async def _keep_alive(self, *, force: bool = False) -> None:
        assert self.client is not None
        now = time.monotonic()
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
            now = time.monotonic()
            if self._local.get(name, 0.0) > now:
                return False
            self._local.pop(name, None)
            self._local[name] = now + ttl_seconds
            if len(self._local) > LOCAL_CLAIMS:
                self._local.pop(next(iter(self._local)))
            return True
        return bool(await self.client.set(name, b"1", nx=True,
                                          px=max(int(ttl_seconds * 1000), 1)))

    async def release(self, key: str) -> None:
        name = self.keys.claim(key)
        if self.client is None:
            self._local.pop(name, None)
            return
        await self.client.delete(name)

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
