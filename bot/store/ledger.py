"""What was posted where: the delivery ledger and the locks around it, in Redis.

One ledger entry per slot - (ISO week, channel, repository) - says whether that
week's digest went out to that channel. The scheduler and `prdigest post` both go
through it:

1. take the slot's lock (`SET NX PX` in a script, renewed while held, released by
   token);
2. read the entry again under the lock - another replica may have just finished;
3. write the intent (`state="sending"`) *fenced* by the lock: the write happens only
   while this holder still owns the lock, so a replica that stalled past its lock's
   expiry cannot start a second post after another one took over;
4. post; 5. record the platform's confirmation (`state="posted"`, message ids) as the
   very next step; 6. release the lock.

A replica killed between 4 and 5 leaves `sending` behind: the delivery is *in doubt*
(the platform may or may not hold the message). The scheduler decides what to do with
it (see `bot.delivery.schedule`); the ledger only records it faithfully.

The lock and the ledger key of a slot share a Redis Cluster hash tag, so the fenced
write is one script on one shard. Reading many slots is a pipeline of GETs (one round
trip per node on a cluster), never a cross-slot MGET; the slots with an entry are
listed in index sets (`entries`), never found by SCAN: one set per week and bucket of
channels, expiring with the entries it lists, and the weeks in a sorted set trimmed
as they expire - nothing in the ledger outlives `LEDGER_TTL_SECONDS`. On a Sentinel-managed master
and on a cluster master with replicas, every ledger write and lock waits briefly for a
replica to have it (`write_replicated`), so a failover does not lose an intent and let
the slot be posted a second time; a `posted` record lost anyway leaves `sending`, the
in-doubt path.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
import zlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

import msgspec
import redis.asyncio as aioredis

from bot.clock import SYSTEM_CLOCK, Clock
from bot.store.client import write_replicated
from bot.store.keys import KEY_PREFIX, Keys

log = logging.getLogger(__name__)

# A year and a bit: `post` without --force still knows last year's deliveries.
LEDGER_TTL_SECONDS = 400 * 24 * 3600
POST_LOCK_SECONDS = 60.0
"""How long a slot's lock lasts unrenewed (renewed every third of it while its holder
lives). A failover the clients wait out (`bot.store.client.MAX_FAILOVER_SECONDS`) must
fit in what is left after a renewal, so a replica whose post is in flight keeps the slot
through it: another replica taking the slot over would find the post not yet sent (it
waits for its turn in Redis too) and send it a second time."""
# Sets a week's slots are listed in: at 10,000 channels about 600 names each, spread
# over the shards of a cluster rather than one hot set.
INDEX_BUCKETS = 16

EntryState = Literal["sending", "posted", "failed", "held"]

# KEYS: lock. ARGV: token, ttl ms. 1 = ours - taken now, or by this very call sent
# again after a failover lost its answer - 0 = another holder's.
_ACQUIRE = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
_RELEASE = """
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


def as_bytes(raw: Any) -> bytes | None:
    """Redis answers bytes, or str when the client decodes responses; None stays None."""
    if raw is None:
        return None
    return raw.encode() if isinstance(raw, str) else bytes(raw)


@dataclass(frozen=True, order=True)
class Slot:
    """One scheduled delivery: a week's digest of `repo` for the channel `channel`
    (`platform:id`). A channel may follow several repositories, hence the repo."""

    week: str
    channel: str
    repo: str

    @property
    def name(self) -> str:
        return f"{self.week}:{self.channel}:{self.repo}"

    @classmethod
    def parse(cls, name: str) -> Slot | None:
        """The slot `name` names (`week:platform:id:owner/repo`), None if malformed."""
        week, _, rest = name.partition(":")
        channel, _, repo = rest.rpartition(":")
        return cls(week, channel, repo) if week and channel and repo else None

    def delivery_key(self, generation: int = 0) -> str:
        """Stable across retries of the same delivery; a forced resend gets a new one.

        Short and plain (`pd-` + 32 hex) so a platform's idempotency field takes it with
        a part suffix (Feishu's `uuid` allows 50 characters).
        """
        digest = hashlib.sha256(f"{self.name}#{generation}".encode()).hexdigest()
        return f"pd-{digest[:32]}"


class LedgerEntry(msgspec.Struct, frozen=True, kw_only=True):
    """The state of one slot.

    `first_attempt_at` is when the current `delivery_key` was first sent: a platform
    that deduplicates by key does so only for a while after that.
    """

    state: EntryState
    week: str
    channel: str
    repo: str
    delivery_key: str
    generation: int = 0
    attempts: int = 0
    failures: int = 0
    first_attempt_at: datetime | None = None
    last_attempt_at: datetime | None = None
    retry_at: datetime | None = None
    posted_at: datetime | None = None
    message_ids: tuple[str, ...] = ()
    replica: str = ""
    error: str | None = None
    forced: bool = False
    resent_in_doubt: int = 0

    @property
    def may_have_arrived(self) -> bool:
        """Whether some of the current key's send may be on the platform: one in flight
        (`sending`), or one that failed after it went out - a timeout, a refusal part-way
        through a digest's parts. The next pass asks the platform first."""
        return self.state == "sending" or (self.state == "failed" and self.attempts > 0)


def next_delivery_key(slot: Slot, entry: LedgerEntry | None, *, force: bool = False) -> str:
    """The key the next send of `slot` carries: the first delivery's; a retry keeps the
    key it was first sent with (a platform that deduplicates by it then recognises the
    retry); `--force` starts a new generation, with a key of its own."""
    if entry is None:
        return slot.delivery_key(0)
    if force:
        return slot.delivery_key(entry.generation + 1)
    return entry.delivery_key


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(LedgerEntry)


def encode_entry(entry: LedgerEntry) -> bytes:
    return _encoder.encode(entry)


def decode_entry(raw: bytes | None) -> LedgerEntry | None:
    """The entry, or None for a missing or unreadable one (a format change, a bad write)."""
    if raw is None:
        return None
    try:
        return _decoder.decode(raw)
    except msgspec.DecodeError:
        log.warning("unreadable ledger entry ignored: %r", raw[:80])
        return None


class RedisLock:
    """A lock held by one token, expiring on its own when its holder dies.

    `kept_alive()` renews it in the background while work runs; `lost` turns True when
    a renewal finds the lock gone or taken (the holder stalled past the expiry).
    """

    def __init__(self, client: aioredis.Redis, key: str, *, ttl_seconds: float,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.client = client
        self.key = key
        self.clock = clock
        self.ttl_ms = max(1, int(ttl_seconds * 1000))
        self.token = secrets.token_hex(16)
        self.held = False
        self.lost = False

    async def acquire(self) -> bool:
        # A lock a failover forgets would let a second replica post the same slot.
        [taken] = await write_replicated(self.client, lambda pipe: pipe.eval(
            _ACQUIRE, 1, self.key, self.token, self.ttl_ms), [self.key])
        self.held = bool(taken)
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
        ok = bool(await self.client.eval(_RENEW, 1, self.key, self.token, self.ttl_ms))
        if not ok:
            self.lost = True
        return ok

    async def release(self) -> None:
        if not self.held:
            return
        self.held = False
        try:
            await self.client.eval(_RELEASE, 1, self.key, self.token)
        except Exception as exc:  # it expires on its own; the work is done either way
            log.warning("could not release lock %s: %s", self.key, exc)

    @contextlib.asynccontextmanager
    async def kept_alive(self) -> AsyncIterator[RedisLock]:
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


class Ledger:
    """Typed access to the ledger entries and slot locks of one Redis."""

    def __init__(
        self, client: aioredis.Redis, *, prefix: str = KEY_PREFIX,
        ttl_seconds: int = LEDGER_TTL_SECONDS, clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.client = client
        self.clock = clock
        self.prefix = prefix
        self.keys = Keys(prefix)
        self.ttl_seconds = ttl_seconds

    def key(self, slot: Slot) -> str:
        return self.keys.ledger(slot.name)

    def lock(self, slot: Slot, ttl_seconds: float) -> RedisLock:
        return RedisLock(self.client, self.keys.post_lock(slot.name),
                         ttl_seconds=ttl_seconds, clock=self.clock)

    async def read(self, slot: Slot) -> tuple[bytes | None, LedgerEntry | None]:
        """The raw entry (for a later fenced write) and its decoded form."""
        raw = as_bytes(await self.client.get(self.key(slot)))
        return raw, decode_entry(raw)

    async def get(self, slot: Slot) -> LedgerEntry | None:
        return (await self.read(slot))[1]

    async def get_many(self, slots: Sequence[Slot]) -> list[LedgerEntry | None]:
        if not slots:
            return []
        async with self.client.pipeline(transaction=False) as pipe:
            for slot in slots:
                pipe.get(self.key(slot))
            raws = await pipe.execute()
        return [decode_entry(as_bytes(raw)) for raw in raws]

    def _index(self, slot: Slot) -> str:
        bucket = zlib.crc32(slot.name.encode()) % INDEX_BUCKETS
        return self.keys.ledger_index(slot.week, bucket)

    def _listed(self, pipe: Any, slot: Slot) -> None:
        """With an entry's write: list its slot in its week's index, which lives as long
        as the entry; note the week, and forget the weeks whose entries expired."""
        index, weeks = self._index(slot), self.keys.ledger_weeks()
        now = time.time()
        pipe.sadd(index, slot.name)
        pipe.expire(index, self.ttl_seconds)
        pipe.zadd(weeks, {slot.week: now + self.ttl_seconds}, gt=True)
        pipe.zremrangebyscore(weeks, "-inf", now)
        pipe.expire(weeks, self.ttl_seconds)

    async def write_fenced(
        self, slot: Slot, lock: RedisLock, expected: bytes | None, entry: LedgerEntry
    ) -> tuple[bool, bytes]:
        """Write `entry` only while `lock` is ours and the entry is still `expected`.

        Returns (written, the bytes written) - the bytes are the next `expected`.
        """
        data = encode_entry(entry)

        def commands(pipe: Any) -> None:
            pipe.eval(_FENCED_WRITE, 2, lock.key, self.key(slot), lock.token,
                      expected or b"", data, self.ttl_seconds)
            self._listed(pipe, slot)

        result, *_ = await write_replicated(self.client, commands,
                                            [lock.key, self.key(slot)])
        if int(result) == 0:
            lock.lost = True
        return int(result) == 1, data

    async def record_posted(self, slot: Slot, entry: LedgerEntry) -> LedgerEntry | None:
        """Record a confirmed post, whoever holds the lock now - the message is out, so
        the ledger must say so. Returns the entry it replaced."""
        def commands(pipe: Any) -> None:
            pipe.set(self.key(slot), encode_entry(entry), ex=self.ttl_seconds, get=True)
            self._listed(pipe, slot)

        old, *_ = await write_replicated(self.client, commands, [self.key(slot)])
        return decode_entry(as_bytes(old))

    async def entries(self) -> list[LedgerEntry]:
        """Every entry (tests, operators), through the indexes of slots; not for the hot
        path. Slots whose entry expired are dropped from their index."""
        weeks = await self.client.zrangebyscore(self.keys.ledger_weeks(), time.time(), "+inf")
        found: list[LedgerEntry] = []
        for week in sorted(m.decode() if isinstance(m, bytes) else str(m) for m in weeks):
            for bucket in range(INDEX_BUCKETS):
                index = self.keys.ledger_index(week, bucket)
                names = [m.decode() if isinstance(m, bytes) else str(m)
                         for m in await self.client.smembers(index)]
                slots = [slot for slot in map(Slot.parse, names) if slot is not None]
                listed = [e for e in await self.get_many(slots) if e is not None]
                present = {Slot(e.week, e.channel, e.repo).name for e in listed}
                expired = [name for name in names if name not in present]
                if expired:
                    await self.client.srem(index, *expired)
                found += listed
        return sorted(found, key=lambda e: (e.week, e.channel, e.repo))


def backoff(failures: int, *, base: timedelta = timedelta(minutes=1),
            cap: timedelta = timedelta(minutes=30)) -> timedelta:
    """1, 2, 4 ... minutes after consecutive failures, at most `cap`."""
    return min(cap, base * (1 << max(0, min(failures - 1, 16))))
