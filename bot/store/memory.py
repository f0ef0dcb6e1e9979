"""The coordination port in this process's memory (`bot.store.coordination`).

What a single replica without Redis coordinates with itself (inbound deliveries
answered once, its own pacing), and what the tests run the exactly-once core on: the
same rules as on Redis, each step atomic because nothing else runs between its lines
(one event loop), expiry on the given `Clock` - a virtual one in tests, so a lock's 60
seconds pass at once. Nothing is shared with another process and nothing survives a
restart; `shared` says so, and the composition roots keep what needs a shared store
(the weekly schedule, notice batches) for Redis.

Memory is bounded: past `max_keys` keys in one table, expired ones are dropped, then
the oldest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.clock import SYSTEM_CLOCK, Clock
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

MAX_KEYS = 100_000
"""Keys one table keeps before it forgets expired ones, then the oldest."""
MICROSECONDS = 1_000_000


class _Table:
    """Keys with values and an optional expiry on `clock`."""

    def __init__(self, clock: Clock, max_keys: int) -> None:
        self.clock = clock
        self.max_keys = max_keys
        self._items: dict[str, tuple[Any, float | None]] = {}

    def now(self) -> float:
        return self.clock.monotonic()

    def get(self, key: str) -> Any:
        held = self._items.get(key)
        if held is None:
            return None
        value, until = held
        if until is not None and until <= self.now():
            del self._items[key]
            return None
        return value

    def ttl_ms(self, key: str) -> int:
        """Milliseconds left before `key` expires: -1 for none, -2 when it is not set."""
        if self.get(key) is None:
            return -2
        until = self._items[key][1]
        return -1 if until is None else max(0, round((until - self.now()) * 1000))

    def set(self, key: str, value: Any, ttl_ms: int | None = None) -> None:
        until = None if ttl_ms is None else self.now() + max(ttl_ms, 1) / 1000
        self._items.pop(key, None)
        self._items[key] = (value, until)
        if len(self._items) > self.max_keys:
            self._forget()

    def expire(self, key: str, ttl_ms: int) -> None:
        value = self.get(key)
        if value is not None:
            self._items[key] = (value, self.now() + max(ttl_ms, 1) / 1000)

    def delete(self, key: str) -> None:
        self._items.pop(key, None)

    def values(self) -> list[Any]:
        return [value for key in list(self._items) if (value := self.get(key)) is not None]

    def keys(self, prefix: str) -> list[str]:
        """The keys set under `prefix`."""
        return [key for key in list(self._items)
                if key.startswith(prefix) and self.get(key) is not None]

    def _forget(self) -> None:
        now = self.now()
        self._items = {key: held for key, held in self._items.items()
                       if held[1] is None or held[1] > now}
        while len(self._items) > self.max_keys:
            del self._items[next(iter(self._items))]


class MemoryLocks(Locks):
    def __init__(self, table: _Table) -> None:
        self._table = table

    async def acquire(self, key: str, token: str, ttl_ms: int) -> bool:
        holder = self._table.get(key)
        if holder is not None:
            return bool(holder == token)
        self._table.set(key, token, ttl_ms)
        return True

    async def renew(self, key: str, token: str, ttl_ms: int) -> bool:
        if self._table.get(key) != token:
            return False
        self._table.expire(key, ttl_ms)
        return True

    async def release(self, key: str, token: str) -> None:
        if self._table.get(key) == token:
            self._table.delete(key)


class MemoryLedger(LedgerStore):
    def __init__(self, table: _Table, locks: _Table) -> None:
        self._table = table
        self._locks = locks

    async def read(self, name: str) -> bytes | None:
        held = self._table.get(name)
        return None if held is None else bytes(held)

    async def read_many(self, names: Sequence[str]) -> list[bytes | None]:
        return [await self.read(name) for name in names]

    async def write_fenced(self, name: str, week: str, *, lock_key: str, token: str,
                           expected: bytes | None, value: bytes, ttl_seconds: int) -> Fenced:
        if self._locks.get(lock_key) != token:
            return Fenced.LOCK_LOST
        current = self._table.get(name) or b""
        if current == value:
            return Fenced.WRITTEN
        if current != (expected or b""):
            return Fenced.CHANGED
        self._table.set(name, value, ttl_seconds * 1000)
        return Fenced.WRITTEN

    async def record(self, name: str, week: str, value: bytes, ttl_seconds: int
                     ) -> bytes | None:
        old = await self.read(name)
        self._table.set(name, value, ttl_seconds * 1000)
        return old

    async def entries(self) -> list[bytes]:
        return [bytes(value) for value in self._table.values()]


class MemoryClaims(ClaimStore):
    def __init__(self, table: _Table) -> None:
        self._table = table

    async def claim(self, key: str, value: bytes, ttl_ms: int) -> bool:
        if self._table.get(key) is not None:
            return False
        self._table.set(key, value, ttl_ms)
        return True

    async def get(self, key: str) -> bytes | None:
        held = self._table.get(key)
        return None if held is None else bytes(held)

    async def put(self, key: str, value: bytes, *, ttl_ms: int | None = None,
                  only_new: bool = False) -> None:
        if only_new and self._table.get(key) is not None:
            return
        self._table.set(key, value, ttl_ms)

    async def exists(self, key: str) -> bool:
        return self._table.get(key) is not None

    async def delete(self, key: str) -> None:
        self._table.delete(key)

    async def take_over(self, key: str, expected: bytes, value: bytes, ttl_ms: int) -> int:
        if self._table.get(key) != expected:
            return 0
        left = self._table.ttl_ms(key)
        if left <= 0:
            left = ttl_ms
        self._table.set(key, value, left)
        return left

    async def release(self, key: str, expected: bytes) -> None:
        if self._table.get(key) == expected:
            self._table.delete(key)


class MemoryLanes(PacingLanes):
    def __init__(self, table: _Table) -> None:
        self._table = table

    def _now_us(self) -> int:
        return round(self._table.now() * MICROSECONDS)

    def _line(self, place: LinePlace | None, now: int) -> dict[str, tuple[int, int]]:
        """The line of `place` (ticket -> when it took its place, when that lapses),
        its lapsed places dropped; empty without a place."""
        if place is None:
            return {}
        line: dict[str, tuple[int, int]] = self._table.get(place.order) or {}
        return {ticket: held for ticket, held in line.items() if held[1] > now}

    async def book(self, lanes: Sequence[str], intervals_us: Sequence[int], within_us: int,
                   *, place: LinePlace | None = None) -> LaneBooking:
        now = self._now_us()
        line = self._line(place, now)
        order = sorted(line, key=lambda ticket: (line[ticket][0], ticket))
        ahead = order.index(place.ticket) if place and place.ticket in line else len(order)
        start = max(now, self._table.get(lanes[0]) or 0)
        booking: LaneBooking | None = None
        for lane in lanes[1:]:
            free = self._table.get(lane) or 0
            if free > start:
                booking = LaneBooking(False, free - now, ahead)
                break
        if booking is None:
            turn = start + ahead * intervals_us[0]
            if turn - now > within_us:
                booking = LaneBooking(False, turn - now, ahead)
        if booking is None:
            for lane, interval in zip(lanes, intervals_us, strict=True):
                free = start + interval
                self._table.set(lane, free, -(-(free - now) // 1000) + 1000)
            if place is not None and place.ticket is not None:
                line.pop(place.ticket, None)
                self._keep_line(place, line, now)
            return LaneBooking(True, start - now, ahead)
        if place is not None and place.ticket is not None:
            joined = line[place.ticket][0] if place.ticket in line else max(
                [now, *(held[0] + 1 for held in line.values())])
            line[place.ticket] = (joined, now + place.keep_ms * 1000)
            self._keep_line(place, line, now)
        return booking

    async def leave(self, place: LinePlace) -> None:
        if place.ticket is None:
            return
        now = self._now_us()
        line = self._line(place, now)
        line.pop(place.ticket, None)
        self._keep_line(place, line, now)

    def _keep_line(self, place: LinePlace, line: dict[str, tuple[int, int]], now: int) -> None:
        if not line:
            self._table.delete(place.order)
            return
        last = max(lapses for _, lapses in line.values())
        self._table.set(place.order, line, -(-(last - now) // 1000) + 1000)

    async def hold(self, lanes: Sequence[str], hold_us: int) -> None:
        now = self._now_us()
        resume = now + hold_us
        for lane in lanes:
            if (self._table.get(lane) or 0) < resume:
                self._table.set(lane, resume, -(-hold_us // 1000) + 1000)


class MemoryValues(SharedValues):
    def __init__(self, table: _Table) -> None:
        self._table = table

    async def get(self, key: str) -> bytes | None:
        held = self._table.get(key)
        return None if held is None else bytes(held)

    async def put(self, key: str, value: bytes, ttl_seconds: int) -> None:
        self._table.set(key, value, ttl_seconds * 1000)

    async def note_week(self, repo: str, week: str, ttl_seconds: int) -> None:
        self._table.set(f"weeks\0{repo}\0{week}", week.encode(), ttl_seconds * 1000)

    async def weeks(self, repo: str) -> set[str]:
        prefix = f"weeks\0{repo}\0"
        return {key.removeprefix(prefix) for key in self._table.keys(prefix)}


class MemoryBatches(BatchStore):
    def __init__(self, table: _Table) -> None:
        self._table = table

    async def add(self, marker: str, batch: str, *, marker_ttl_ms: int, field: str,
                  item: bytes, header: Mapping[str, bytes]) -> bool:
        if self._table.get(marker) is not None:
            return False
        self._table.set(marker, b"1", marker_ttl_ms)
        fields: dict[str, bytes] = dict(self._table.get(batch) or {})
        for name, value in header.items():
            fields.setdefault(name, value)
        fields[field] = item
        self._table.set(batch, fields)
        return True

    async def take(self, batch: str, out: str, *, due_field: str, now_ms: int
                   ) -> dict[str, bytes]:
        if self._table.get(out) is None:
            fields = self._table.get(batch)
            if fields is not None and int(fields.get(due_field, b"0")) <= now_ms:
                self._table.delete(batch)
                self._table.set(out, fields)
        return dict(self._table.get(out) or {})

    async def drop(self, out: str, *, id_field: str, batch_id: str) -> None:
        fields = self._table.get(out)
        if fields is not None and fields.get(id_field) == batch_id.encode():
            self._table.delete(out)


class MemoryCoordination:
    """The port in this process, expiring on `clock`. `shared`: whether it stands for a
    store other replicas see - tests that run several replicas in one process on one
    object; a process alone without Redis is not shared."""

    def __init__(self, clock: Clock = SYSTEM_CLOCK, *, keys: Keys | None = None,
                 max_keys: int = MAX_KEYS, shared: bool = False) -> None:
        self.clock = clock
        self.shared = shared
        self.keys = keys or Keys()
        tables = {name: _Table(clock, max_keys) for name in
                  ("locks", "ledger", "claims", "lanes", "values", "batches")}
        self.locks = MemoryLocks(tables["locks"])
        self.ledger = MemoryLedger(tables["ledger"], tables["locks"])
        self.claims = MemoryClaims(tables["claims"])
        self.lanes = MemoryLanes(tables["lanes"])
        self.values = MemoryValues(tables["values"])
        self.batches = MemoryBatches(tables["batches"])

    async def problem(self) -> str | None:
        return None

    async def hazards(self) -> list[str]:
        return []

    async def health(self, timeout: float) -> StoreHealth:
        return StoreHealth(ok=True)

    async def close(self) -> None:
        return None
