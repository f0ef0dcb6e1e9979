"""The coordination port on Redis (`bot.store.coordination`): one server, a Cluster or a
Sentinel set, shared by every replica, through the asyncio client only.

Each step is one command or one Lua script whose keys share a hash tag (one Cluster
slot: `bot.store.keys`). Writes the exactly-once rests on - a slot's lock, a ledger
entry - wait briefly for a replica to have them (`write_replicated`), so a failover
does not forget them. Scripts answer a retry of themselves (sent again after a
failover lost the first answer) as the first try succeeded: a lock already the
caller's is taken, an entry already the value written is written.

Whatever the client raises when Redis is away or refuses (`REDIS_ERRORS`) comes out
as `StoreUnavailable`.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis

from bot.store.coordination import (
    BatchStore,
    ClaimStore,
    Fenced,
    LaneBooking,
    LedgerStore,
    LinePlace,
    Locks,
    PacingLanes,
    SharedValues,
    StoreHealth,
)
from bot.store.keys import Keys
from bot.store.redis.client import (
    REDIS_ERRORS,
    async_client,
    cluster_masters,
    scripting_problem,
    unavailable_as_store_error,
    write_replicated,
)
from bot.store.redis.safety import redis_hazards
from bot.store.redis.weeks_index import note_week_async, weeks_held_async

INDEX_BUCKETS = 16
"""Sets a week's ledger slots are listed in: at 10,000 channels about 600 names each,
spread over the shards of a cluster rather than one hot set."""
_KEY_MARGIN_MS = 1000
"""How long after a lane's next turn its key stays (ms): a margin past the turn."""

# KEYS: lock. ARGV: token, ttl ms. 1 = ours - taken now, or by this very call sent
# again after a failover lost its answer - 0 = another holder's.
_ACQUIRE = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
_RELEASE_LOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
# KEYS: lock, entry. ARGV: lock token, expected entry ('' = none), new entry, ttl seconds.
# 1 = written, 0 = the lock is no longer ours, -1 = the entry changed meanwhile. An entry
# that already is the new one was written by this very call, sent again after a
# failover lost its answer: written, not changed by another.
_FENCED_WRITE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local current = redis.call('GET', KEYS[2])
if current == false then current = '' end
if current == ARGV[3] then return 1 end
if current ~= ARGV[2] then return -1 end
redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])
return 1
"""
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
_RELEASE_CLAIM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
# KEYS: the lanes, widest first, then (when the last ARGV is 1) the line's order and
# alive sets. ARGV[1]: how far ahead a turn may be booked (us); ARGV[1 + i]: lane i's
# interval (us); then the key margin (ms), the ticket ('' = it only counts behind the
# line), how long its place is kept (ms), 1 when there is a line (0: none is looked
# at). Places whose keep ran out are dropped first (a bounded batch per call).
# Returns {1, wait, ahead} when booked (the turn is `wait` us away; a ticket leaves the
# line), {0, wait, ahead} when not: a narrower lane is busy until then, or the turn
# (after the `ahead` sends before it in the line) is further away than allowed - a
# ticket then takes or keeps its place.
_BOOK = """
local lined = ARGV[#ARGV] == '1'
local n = #KEYS
if lined then n = n - 2 end
local order, alive = KEYS[n + 1], KEYS[n + 2]
local margin = tonumber(ARGV[n + 2])
local ticket, keep = ARGV[n + 3], tonumber(ARGV[n + 4])
if not lined then ticket = '' end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local ahead = 0
if lined then
  local lapsed = redis.call('ZRANGEBYSCORE', alive, '-inf', string.format('%d', now),
                            'LIMIT', 0, 500)
  if #lapsed > 0 then
    redis.call('ZREM', order, unpack(lapsed))
    redis.call('ZREM', alive, unpack(lapsed))
  end
  ahead = false
  if ticket ~= '' then ahead = redis.call('ZRANK', order, ticket) end
  if not ahead then ahead = redis.call('ZCARD', order) end
end
local start = math.max(now, tonumber(redis.call('GET', KEYS[1]) or 0))
local wait = false
for i = 2, n do
  local free = tonumber(redis.call('GET', KEYS[i]) or 0)
  if free > start then
    wait = free - now
    break
  end
end
if not wait then
  local turn = start + ahead * tonumber(ARGV[2])
  if turn - now > tonumber(ARGV[1]) then wait = turn - now end
end
if not wait then
  for i = 1, n do
    local free = start + tonumber(ARGV[i + 1])
    redis.call('SET', KEYS[i], string.format('%d', free), 'PX',
               math.ceil((free - now) / 1000) + margin)
  end
  if ticket ~= '' then
    redis.call('ZREM', order, ticket)
    redis.call('ZREM', alive, ticket)
  end
  return {1, start - now, ahead}
end
if ticket ~= '' then
  if not redis.call('ZSCORE', order, ticket) then
    -- After the last place taken, even within one microsecond: the line keeps order.
    local joined = now
    local last = redis.call('ZRANGE', order, -1, -1, 'WITHSCORES')
    if #last > 0 then joined = math.max(now, tonumber(last[2]) + 1) end
    redis.call('ZADD', order, string.format('%d', joined), ticket)
  end
  redis.call('ZADD', alive, string.format('%d', now + keep * 1000), ticket)
  if redis.call('PTTL', order) < keep + margin then
    redis.call('PEXPIRE', order, keep + margin)
    redis.call('PEXPIRE', alive, keep + margin)
  end
end
return {0, wait, ahead}
"""
# KEYS: the line's order and alive sets. ARGV: the ticket leaving it.
_LEAVE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""
# KEYS: the lanes. ARGV[1]: the hold (us), ARGV[2]: key margin (ms). No turn before it.
_HOLD = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local resume = now + tonumber(ARGV[1])
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or 0) < resume then
    redis.call('SET', KEYS[i], string.format('%d', resume), 'PX',
               math.ceil((resume - now) / 1000) + tonumber(ARGV[2]))
  end
end
return 1
"""
# KEYS: marker, open batch. ARGV: marker ttl ms, field, item, then the header's
# field/value pairs (set only when the batch is new).
_ADD = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
for i = 4, #ARGV, 2 do
  redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
# KEYS: open batch, out batch. ARGV: the due field, now ms. 1 = moved, 2 = one is
# already out, 0 = none due.
_TAKE = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
local due = redis.call('HGET', KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
return 1
"""
# KEYS: out batch. ARGV: the id field, its id. Drops it only while it is still that batch.
_DROP = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def as_bytes(raw: Any) -> bytes | None:
    """Redis answers bytes, or str when the client decodes responses; None stays None."""
    if raw is None:
        return None
    return raw.encode() if isinstance(raw, str) else bytes(raw)


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class RedisLocks(Locks):
    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client

    async def acquire(self, key: str, token: str, ttl_ms: int) -> bool:
        # A lock a failover forgets would let a second replica post the same slot.
        with unavailable_as_store_error():
            [taken] = await write_replicated(self.client, lambda pipe: pipe.eval(
                _ACQUIRE, 1, key, token, ttl_ms), [key])
        return bool(taken)

    async def renew(self, key: str, token: str, ttl_ms: int) -> bool:
        with unavailable_as_store_error():
            return bool(await self.client.eval(_RENEW, 1, key, token, ttl_ms))

    async def release(self, key: str, token: str) -> None:
        with unavailable_as_store_error():
            await self.client.eval(_RELEASE_LOCK, 1, key, token)


class RedisLedger(LedgerStore):
    """Entries under `Keys.ledger(name)`, listed in index sets (`entries`), never found
    by SCAN: one set per week and bucket of slots, expiring with the entries it lists,
    and the weeks in a sorted set trimmed as they expire."""

    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    async def read(self, name: str) -> bytes | None:
        with unavailable_as_store_error():
            return as_bytes(await self.client.get(self.keys.ledger(name)))

    async def read_many(self, names: Sequence[str]) -> list[bytes | None]:
        """One pipeline of GETs (one round trip per node on a cluster), never a
        cross-slot MGET."""
        if not names:
            return []
        with unavailable_as_store_error():
            async with self.client.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.get(self.keys.ledger(name))
                raws = await pipe.execute()
        return [as_bytes(raw) for raw in raws]

    def _listed(self, pipe: Any, name: str, week: str, ttl_seconds: int) -> None:
        """With an entry's write: list its slot in its week's index, which lives as long
        as the entry; note the week, and forget the weeks whose entries expired."""
        bucket = zlib.crc32(name.encode()) % INDEX_BUCKETS
        index, weeks = self.keys.ledger_index(week, bucket), self.keys.ledger_weeks()
        now = time.time()  # real epoch seconds: the scores track Redis's own key expiries
        pipe.sadd(index, name)
        pipe.expire(index, ttl_seconds)
        pipe.zadd(weeks, {week: now + ttl_seconds}, gt=True)
        pipe.zremrangebyscore(weeks, "-inf", now)
        pipe.expire(weeks, ttl_seconds)

    async def write_fenced(self, name: str, week: str, *, lock_key: str, token: str,
                           expected: bytes | None, value: bytes, ttl_seconds: int) -> Fenced:
        key = self.keys.ledger(name)

        def commands(pipe: Any) -> None:
            pipe.eval(_FENCED_WRITE, 2, lock_key, key, token, expected or b"", value,
                      ttl_seconds)
            self._listed(pipe, name, week, ttl_seconds)

        with unavailable_as_store_error():
            result, *_ = await write_replicated(self.client, commands, [lock_key, key])
        return Fenced(int(result))

    async def record(self, name: str, week: str, value: bytes, ttl_seconds: int
                     ) -> bytes | None:
        key = self.keys.ledger(name)

        def commands(pipe: Any) -> None:
            pipe.set(key, value, ex=ttl_seconds, get=True)
            self._listed(pipe, name, week, ttl_seconds)

        with unavailable_as_store_error():
            old, *_ = await write_replicated(self.client, commands, [key])
        return as_bytes(old)

    async def entries(self) -> list[bytes]:
        """Walks the indexes; names whose entry expired are dropped from their index."""
        found: list[bytes] = []
        with unavailable_as_store_error():
            weeks = await self.client.zrangebyscore(self.keys.ledger_weeks(), time.time(),
                                                    "+inf")
            for week in sorted(map(_text, weeks)):
                for bucket in range(INDEX_BUCKETS):
                    index = self.keys.ledger_index(week, bucket)
                    names = sorted(map(_text, await self.client.smembers(index)))
                    raws = await self.read_many(names)
                    expired = [name for name, raw in zip(names, raws, strict=True)
                               if raw is None]
                    if expired:
                        await self.client.srem(index, *expired)
                    found += [raw for raw in raws if raw is not None]
        return found


class RedisClaims(ClaimStore):
    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client

    async def claim(self, key: str, value: bytes, ttl_ms: int) -> bool:
        with unavailable_as_store_error():
            return bool(await self.client.set(key, value, nx=True, px=max(ttl_ms, 1)))

    async def get(self, key: str) -> bytes | None:
        with unavailable_as_store_error():
            return as_bytes(await self.client.get(key))

    async def put(self, key: str, value: bytes, *, ttl_ms: int | None = None,
                  only_new: bool = False) -> None:
        with unavailable_as_store_error():
            await self.client.set(key, value, nx=only_new,
                                  px=None if ttl_ms is None else max(ttl_ms, 1))

    async def exists(self, key: str) -> bool:
        with unavailable_as_store_error():
            return bool(await self.client.exists(key))

    async def delete(self, key: str) -> None:
        with unavailable_as_store_error():
            await self.client.delete(key)

    async def take_over(self, key: str, expected: bytes, value: bytes, ttl_ms: int) -> int:
        with unavailable_as_store_error():
            return int(await self.client.eval(_TAKE_OVER, 1, key, expected, value, ttl_ms))

    async def release(self, key: str, expected: bytes) -> None:
        with unavailable_as_store_error():
            await self.client.eval(_RELEASE_CLAIM, 1, key, expected)


class RedisLanes(PacingLanes):
    """Each lane one key holding the moment (Redis `TIME`, microseconds) of its next
    free turn, expiring once that has passed: an idle lane costs nothing. The lanes of
    one send share the widest lane's hash tag (`Keys.pace`), and so does its line
    (`Keys.pace_line`): two sorted sets of tickets, by when each took its place and by
    when that place lapses, expiring with the longest-kept place."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client

    async def book(self, lanes: Sequence[str], intervals_us: Sequence[int], within_us: int,
                   *, place: LinePlace | None = None) -> LaneBooking:
        line = [] if place is None else [place.order, place.alive]
        ticket, keep_ms = ("", 0) if place is None else (place.ticket or "", place.keep_ms)
        with unavailable_as_store_error():
            granted, wait, ahead = await self.client.eval(
                _BOOK, len(lanes) + len(line), *lanes, *line, within_us, *intervals_us,
                _KEY_MARGIN_MS, ticket, keep_ms, 1 if line else 0)
        return LaneBooking(bool(int(granted)), int(wait), int(ahead))

    async def leave(self, place: LinePlace) -> None:
        if place.ticket is None:
            return
        with unavailable_as_store_error():
            await self.client.eval(_LEAVE, 2, place.order, place.alive, place.ticket)

    async def hold(self, lanes: Sequence[str], hold_us: int) -> None:
        with unavailable_as_store_error():
            await self.client.eval(_HOLD, len(lanes), *lanes, hold_us, _KEY_MARGIN_MS)


class RedisValues(SharedValues):
    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    async def get(self, key: str) -> bytes | None:
        with unavailable_as_store_error():
            return as_bytes(await self.client.get(key))

    async def put(self, key: str, value: bytes, ttl_seconds: int) -> None:
        with unavailable_as_store_error():
            await self.client.set(key, value, ex=ttl_seconds)

    async def note_week(self, repo: str, week: str, ttl_seconds: int) -> None:
        with unavailable_as_store_error():
            await note_week_async(self.client, self.keys, repo, week, ttl_seconds)

    async def weeks(self, repo: str) -> set[str]:
        with unavailable_as_store_error():
            return await weeks_held_async(self.client, self.keys, repo)


class RedisBatches(BatchStore):
    """A batch is a hash; marker and batch share the channel's hash tag, so adding is
    one script on one shard."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client

    async def add(self, marker: str, batch: str, *, marker_ttl_ms: int, field: str,
                  item: bytes, header: Mapping[str, bytes]) -> bool:
        pairs = [part for name, value in header.items() for part in (name, value)]
        with unavailable_as_store_error():
            return bool(await self.client.eval(_ADD, 2, marker, batch, max(1, marker_ttl_ms),
                                               field, item, *pairs))

    async def take(self, batch: str, out: str, *, due_field: str, now_ms: int
                   ) -> dict[str, bytes]:
        with unavailable_as_store_error():
            await self.client.eval(_TAKE, 2, batch, out, due_field, now_ms)
            raw = await self.client.hgetall(out)
        return {_text(name): as_bytes(value) or b"" for name, value in raw.items()}

    async def drop(self, out: str, *, id_field: str, batch_id: str) -> None:
        with unavailable_as_store_error():
            await self.client.eval(_DROP, 1, out, id_field, batch_id)


class RedisCoordination:
    """The port on one asyncio Redis client (any topology of `bot.store.redis.client`)."""

    shared = True

    def __init__(self, client: aioredis.Redis, keys: Keys | None = None) -> None:
        self.client = client
        self.keys = keys or Keys()
        self.locks = RedisLocks(client)
        self.ledger = RedisLedger(client, self.keys)
        self.claims = RedisClaims(client)
        self.lanes = RedisLanes(client)
        self.values = RedisValues(client, self.keys)
        self.batches = RedisBatches(client)

    @classmethod
    def from_url(cls, url: str, variable: str = "REDIS_URL", *,
                 keys: Keys | None = None) -> RedisCoordination:
        return cls(async_client(url, variable), keys)

    async def problem(self) -> str | None:
        return await scripting_problem(self.client)

    async def hazards(self) -> list[str]:
        return await redis_hazards(self.client)

    async def health(self, timeout: float) -> StoreHealth:
        """A cluster's word from every master (one node's PING would say ok while a
        third of the slots have none); one server's PING otherwise."""
        try:
            masters = await cluster_masters(self.client, timeout=timeout)
            if masters is None:
                await asyncio.wait_for(self.client.ping(), timeout=timeout)
        except REDIS_ERRORS as exc:
            return StoreHealth(ok=False, error=type(exc).__name__)
        if masters is None:
            return StoreHealth(ok=True)
        ok = all(state == "ok" for state in masters.values())
        return StoreHealth(ok=ok, error=None if ok else "ClusterDown", masters=masters)

    async def close(self) -> None:
        await self.client.aclose()
