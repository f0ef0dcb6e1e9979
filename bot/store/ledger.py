"""What was posted where: the delivery ledger and the locks around it.

One ledger entry per slot - (ISO week, channel, repository) - says whether that
week's digest went out to that channel. The scheduler and `prdigest post` both go
through it:

1. take the slot's lock (`bot.store.locks`: held by a token, renewed while held,
   released by token);
2. read the entry again under the lock - another replica may have just finished;
3. write the intent (`state="sending"`) *fenced* by the lock: the write happens only
   while this holder still owns the lock, so a replica that stalled past its lock's
   expiry cannot start a second post after another one took over;
4. post; 5. record the platform's confirmation (`state="posted"`, message ids) as the
   very next step; 6. release the lock.

A replica killed between 4 and 5 leaves `sending` behind: the delivery is *in doubt*
(the platform may or may not hold the message). The scheduler decides what to do with
it (see `bot.delivery.schedule`); the ledger only records it faithfully.

The entries and locks live in the coordination port (`bot.store.coordination`): on
Redis the lock and the entry of a slot share a hash tag, so the fenced write is one
script on one shard, and every lock and ledger write waits briefly for a replica to
have it, so a failover does not lose an intent and let the slot be posted a second
time (a `posted` record lost anyway leaves `sending`, the in-doubt path). Nothing in the
ledger outlives `LEDGER_TTL_SECONDS`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import msgspec

from bot.clock import SYSTEM_CLOCK, Clock
from bot.store.coordination import Coordination, Fenced
from bot.store.locks import Lock

log = logging.getLogger(__name__)

# A year and a bit: `post` without --force still knows last year's deliveries.
LEDGER_TTL_SECONDS = 400 * 24 * 3600
POST_LOCK_SECONDS = 60.0
"""How long a slot's lock lasts unrenewed (renewed every third of it while its holder
lives). A failover the clients wait out (`bot.store.redis.client.MAX_FAILOVER_SECONDS`) must
fit in what is left after a renewal, so a replica whose post is in flight keeps the slot
through it: another replica taking the slot over would find the post not yet sent (it
waits for its turn in Redis too) and send it a second time."""
EntryState = Literal["sending", "posted", "failed", "held"]

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


class Ledger:
    """Typed access to the ledger entries and slot locks of one coordination store;
    its locks wait on `clock`."""

    def __init__(self, port: Coordination, *, ttl_seconds: int = LEDGER_TTL_SECONDS,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.port = port
        self.store = port.ledger
        self.keys = port.keys
        self.ttl_seconds = ttl_seconds
        self.clock = clock

    def lock(self, slot: Slot, ttl_seconds: float) -> Lock:
        return Lock(self.port.locks, self.keys.post_lock(slot.name), ttl_seconds=ttl_seconds,
                    clock=self.clock)

    async def read(self, slot: Slot) -> tuple[bytes | None, LedgerEntry | None]:
        """The raw entry (for a later fenced write) and its decoded form."""
        raw = await self.store.read(slot.name)
        return raw, decode_entry(raw)

    async def get(self, slot: Slot) -> LedgerEntry | None:
        return (await self.read(slot))[1]

    async def get_many(self, slots: Sequence[Slot]) -> list[LedgerEntry | None]:
        raws = await self.store.read_many([slot.name for slot in slots])
        return [decode_entry(raw) for raw in raws]

    async def write_fenced(
        self, slot: Slot, lock: Lock, expected: bytes | None, entry: LedgerEntry
    ) -> tuple[bool, bytes]:
        """Write `entry` only while `lock` is ours and the entry is still `expected`.

        Returns (written, the bytes written) - the bytes are the next `expected`.
        """
        data = encode_entry(entry)
        result = await self.store.write_fenced(
            slot.name, slot.week, lock_key=lock.key, token=lock.token, expected=expected,
            value=data, ttl_seconds=self.ttl_seconds)
        if result is Fenced.LOCK_LOST:
            lock.lost = True
        return result is Fenced.WRITTEN, data

    async def record_posted(self, slot: Slot, entry: LedgerEntry) -> LedgerEntry | None:
        """Record a confirmed post, whoever holds the lock now - the message is out, so
        the ledger must say so. Returns the entry it replaced."""
        old = await self.store.record(slot.name, slot.week, encode_entry(entry),
                                      self.ttl_seconds)
        return decode_entry(old)

    async def entries(self) -> list[LedgerEntry]:
        """Every entry (tests, operators); not for the hot path."""
        found = [entry for entry in map(decode_entry, await self.store.entries())
                 if entry is not None]
        return sorted(found, key=lambda e: (e.week, e.channel, e.repo))


def backoff(failures: int, *, base: timedelta = timedelta(minutes=1),
            cap: timedelta = timedelta(minutes=30)) -> timedelta:
    """1, 2, 4 ... minutes after consecutive failures, at most `cap`."""
    return min(cap, base * (1 << max(0, min(failures - 1, 16))))
