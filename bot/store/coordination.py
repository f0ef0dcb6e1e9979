"""The coordination port: what replicas share so that every post goes out once.

The exactly-once core - slot locks and the delivery ledger (`bot.store.ledger`),
two-step claims (`bot.store.claims`), notice batches (`bot.store.notice_batches`), the
pacing lanes (`bot.store.pacing`), the digests built once for every replica
(`bot.delivery.shared_digests`) - keeps its rules above this port and asks it only for
the few steps that must each be atomic. Two implementations answer them:

- `bot.store.redis.coordination.RedisCoordination`: one Redis (single, Cluster or
  Sentinel), shared by every replica; each step is one command or one Lua script on
  one hash slot.
- `bot.store.memory.MemoryCoordination`: this process alone, on a `Clock` - a single
  replica without Redis, and the tests (on a virtual clock, nothing waits).

Both pass the same contract suite (`tests/coordination/`). Keys are named by
`bot.store.keys.Keys`; values are bytes. A store that cannot be reached raises
`StoreUnavailable`, whatever its client raised.

Expiry is the store's own time: Redis's for Redis (a lock lapses on the server even
when its holder's clock stalls), the clock's for memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

from bot.store.keys import Keys


class StoreUnavailable(Exception):
    """The store could not be reached or did not answer (an outage, a failover not
    waited out, a killed replica's connection). `reason` names what the client raised."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class Fenced(IntEnum):
    """What a fenced ledger write found."""

    WRITTEN = 1
    """Written - or already written by this very call, sent again after a failover
    lost its answer."""
    LOCK_LOST = 0
    """The lock is no longer the writer's: nothing written."""
    CHANGED = -1
    """The entry is no longer the one the writer read: nothing written."""


class Locks(Protocol):
    """Locks held by a token (the fencing token the ledger's writes carry), expiring
    on their own after `ttl_ms` unless renewed."""

    async def acquire(self, key: str, token: str, ttl_ms: int) -> bool:
        """Take the lock for `token`: True when taken now or already `token`'s (the
        same call sent again), False when another token holds it. Kept by a replica
        before it answers, where the store has replicas."""
        ...

    async def renew(self, key: str, token: str, ttl_ms: int) -> bool:
        """Extend `token`'s lock to `ttl_ms` from now; False when it is not `token`'s."""
        ...

    async def release(self, key: str, token: str) -> None:
        """Drop the lock if it is still `token`'s."""
        ...


class LedgerStore(Protocol):
    """The delivery ledger's entries, one per slot name, listed by week."""

    async def read(self, name: str) -> bytes | None: ...

    async def read_many(self, names: Sequence[str]) -> list[bytes | None]: ...

    async def write_fenced(self, name: str, week: str, *, lock_key: str, token: str,
                           expected: bytes | None, value: bytes, ttl_seconds: int) -> Fenced:
        """Write `value` only while `lock_key` is `token`'s and the entry is still
        `expected` (None: no entry), in one step; kept by a replica before it answers."""
        ...

    async def record(self, name: str, week: str, value: bytes, ttl_seconds: int
                     ) -> bytes | None:
        """Write `value` whoever holds the lock (a confirmed post must be recorded);
        the entry it replaced. Kept by a replica before it answers."""
        ...

    async def entries(self) -> list[bytes]:
        """Every entry not expired (tests, operators; not the hot path)."""
        ...


class ClaimStore(Protocol):
    """Set-once values with expiry: claims, their owners' alive marks, small values."""

    async def claim(self, key: str, value: bytes, ttl_ms: int) -> bool:
        """Set `key` to `value` unless it is set; whether it was."""
        ...

    async def get(self, key: str) -> bytes | None: ...

    async def put(self, key: str, value: bytes, *, ttl_ms: int | None = None,
                  only_new: bool = False) -> None:
        """Set `key` (for `ttl_ms`, else for good); `only_new`: unless it is set."""
        ...

    async def exists(self, key: str) -> bool: ...

    async def delete(self, key: str) -> None: ...

    async def take_over(self, key: str, expected: bytes, value: bytes, ttl_ms: int) -> int:
        """Replace `expected` (a dead owner's claim) by `value`, keeping what is left of
        its expiry (`ttl_ms` when none is left); the milliseconds left, 0 when the key
        no longer holds `expected` (another taker won)."""
        ...

    async def release(self, key: str, expected: bytes) -> None:
        """Delete `key` only while it holds `expected`."""
        ...


@dataclass(frozen=True)
class LaneBooking:
    """A booking in the pacing lanes: `granted` with the turn `wait_us` away, or not
    (a narrower lane is busy until then, or the turn is further than allowed: then
    `wait_us` is when it would come, the sends ahead in the line going first).
    `ahead`: how many sends waiting in the line were before this one."""

    granted: bool
    wait_us: int
    ahead: int = 0


@dataclass(frozen=True)
class LinePlace:
    """A send's place in the line of its widest lane: the line's two keys (the places
    in the order they were taken; when each lapses), the send's ticket (None: it does
    not wait in line, it only counts behind it), and how long its place is kept unless
    it asks again (a dead waiter's lapses)."""

    order: str
    alive: str
    ticket: str | None = None
    keep_ms: int = 0


class PacingLanes(Protocol):
    """Each lane's next free turn, in the store's time (microseconds), and the line of
    sends waiting for a turn further away than they may book."""

    async def book(self, lanes: Sequence[str], intervals_us: Sequence[int], within_us: int,
                   *, place: LinePlace | None = None) -> LaneBooking:
        """Book the next turn of `lanes[0]` and, in one step, of the narrower lanes
        when they are free by then; each lane's next turn moves on by its interval.

        The turn is booked only when it would be at most `within_us` away had every
        send still in the line (places not asked for within their `keep_ms` are
        dropped) gone first: a send counts behind the line of `place`, or at its ticket's
        place in it. A ticket not booked takes (or keeps) its place, at the end of the
        line the first time; booked, it leaves the line."""
        ...

    async def leave(self, place: LinePlace) -> None:
        """Give up `place` (the send gave up, or went another way)."""
        ...

    async def hold(self, lanes: Sequence[str], hold_us: int) -> None:
        """No turn in `lanes` before `hold_us` from now."""
        ...


class SharedValues(Protocol):
    """Values built once and read by every replica (finished weekly digests), and the
    index of the weeks each repository has data kept for."""

    async def get(self, key: str) -> bytes | None: ...

    async def put(self, key: str, value: bytes, ttl_seconds: int) -> None: ...

    async def note_week(self, repo: str, week: str, ttl_seconds: int) -> None:
        """`repo` has data of `week` kept for `ttl_seconds`."""
        ...

    async def weeks(self, repo: str) -> set[str]:
        """The weeks of `repo` whose kept data has not expired."""
        ...


class BatchStore(Protocol):
    """Notice batches: an open batch per channel (fields of a map) and the one out."""

    async def add(self, marker: str, batch: str, *, marker_ttl_ms: int, field: str,
                  item: bytes, header: Mapping[str, bytes]) -> bool:
        """Set `marker` unless set and, in the same step, put `item` under `field` of
        `batch` (opening it with `header`'s fields when new); False when `marker` was
        set (the item was added before)."""
        ...

    async def take(self, batch: str, out: str, *, due_field: str, now_ms: int
                   ) -> dict[str, bytes]:
        """Move `batch` to `out` when its `due_field` is at most `now_ms` and no batch
        is out; then the fields of the batch out (empty: none)."""
        ...

    async def drop(self, out: str, *, id_field: str, batch_id: str) -> None:
        """Delete `out` only while its `id_field` is `batch_id`."""
        ...


@dataclass(frozen=True)
class StoreHealth:
    """What `/healthz` says of the store: reachable, the error's name when not, and a
    cluster's masters by address with each one's state."""

    ok: bool
    error: str | None = None
    masters: dict[str, str] | None = field(default=None)


class Coordination(Protocol):
    """The port: the stores the replicas share, the names of their keys, and the
    store's health."""

    @property
    def keys(self) -> Keys: ...

    @property
    def locks(self) -> Locks: ...

    @property
    def ledger(self) -> LedgerStore: ...

    @property
    def claims(self) -> ClaimStore: ...

    @property
    def lanes(self) -> PacingLanes: ...

    @property
    def values(self) -> SharedValues: ...

    @property
    def batches(self) -> BatchStore: ...

    @property
    def shared(self) -> bool:
        """Whether other processes see this store (Redis) or only this one (memory)."""
        ...

    async def problem(self) -> str | None:
        """Why the locks cannot work on this store (scripts refused), checked once at
        start; None when they can. An outage is not a problem: it passes."""
        ...

    async def hazards(self) -> list[str]:
        """What may make the store drop what prdigest keeps (an eviction policy that
        evicts expiring keys, no persistence), one sentence each, checked once at start;
        [] when nothing does or the store cannot be asked just now."""
        ...

    async def health(self, timeout: float) -> StoreHealth: ...

    async def close(self) -> None: ...
