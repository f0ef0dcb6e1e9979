"""The coordination port's contract: the steps the exactly-once core rests on behave the
same on the in-memory store and on Redis (one server, a Cluster, a Sentinel-managed
master). Every other test of the core runs on memory; these say memory is Redis."""

from __future__ import annotations

import asyncio

import pytest

from bot.store.coordination import Fenced, LaneBooking, LinePlace, StoreUnavailable
from tests.coordination.conftest import Store

LONG_MS = 30_000
"""A lifetime nothing outlives during a test, however loaded the machine."""
SHORT_MS = 1_000
"""A lifetime a test lets run out (real time on Redis: long enough that a loaded
machine checks the lock still held before it lapses)."""
PAST_SHORT = 1.5


def lock_key(store: Store, name: str = "slot") -> str:
    return store.keys.post_lock(name)


# --- locks ------------------------------------------------------------------------------


async def test_a_lock_is_held_by_one_token(store: Store) -> None:
    locks, key = store.port.locks, lock_key(store)
    assert await locks.acquire(key, "first", LONG_MS)
    assert not await locks.acquire(key, "second", LONG_MS)
    # The same call sent again (its answer lost to a failover) finds the lock its own.
    assert await locks.acquire(key, "first", LONG_MS)
    await locks.release(key, "second")  # not its lock: nothing happens
    assert not await locks.acquire(key, "second", LONG_MS)
    await locks.release(key, "first")
    assert await locks.acquire(key, "second", LONG_MS)


async def test_a_lock_lapses_on_its_own_and_its_holder_cannot_renew_it(store: Store) -> None:
    locks, key = store.port.locks, lock_key(store)
    assert await locks.acquire(key, "stalled", SHORT_MS)
    assert not await locks.acquire(key, "taker", LONG_MS)
    await store.elapse(PAST_SHORT)  # nobody released it
    assert await locks.acquire(key, "taker", LONG_MS)
    assert not await locks.renew(key, "stalled", LONG_MS)
    await locks.release(key, "stalled")
    assert not await locks.acquire(key, "third", LONG_MS)  # still the taker's


async def test_a_renewed_lock_outlives_its_first_lifetime(store: Store) -> None:
    locks, key = store.port.locks, lock_key(store)
    assert await locks.acquire(key, "holder", SHORT_MS)
    assert await locks.renew(key, "holder", LONG_MS)
    await store.elapse(PAST_SHORT)
    assert not await locks.acquire(key, "other", LONG_MS)
    assert await locks.renew(key, "holder", LONG_MS)


# --- the ledger ---------------------------------------------------------------------------


async def test_a_fenced_write_needs_the_lock_and_the_entry_it_read(store: Store) -> None:
    ledger, locks = store.port.ledger, store.port.locks
    name, week = "2026-W29:slack:C1:acme/lumen", "2026-W29"
    key = lock_key(store, name)  # a slot's lock: on a Cluster, in its entry's slot
    assert await locks.acquire(key, "mine", LONG_MS)

    async def write(token: str, expected: bytes | None, value: bytes) -> Fenced:
        return await ledger.write_fenced(name, week, lock_key=key, token=token,
                                         expected=expected, value=value, ttl_seconds=600)

    assert await write("another", None, b"sending") is Fenced.LOCK_LOST
    assert await ledger.read(name) is None
    assert await write("mine", None, b"sending") is Fenced.WRITTEN
    assert await ledger.read(name) == b"sending"
    # A write based on an outdated read is refused ...
    assert await write("mine", None, b"failed") is Fenced.CHANGED
    # ... but not the same write sent again (its first answer lost): it is there.
    assert await write("mine", None, b"sending") is Fenced.WRITTEN
    assert await write("mine", b"sending", b"posted") is Fenced.WRITTEN
    assert await ledger.read(name) == b"posted"


async def test_a_confirmed_post_is_recorded_whoever_holds_the_lock(store: Store) -> None:
    ledger = store.port.ledger
    name = "2026-W29:telegram:-100:acme/lumen"
    assert await ledger.record(name, "2026-W29", b"posted-1", 600) is None
    assert await ledger.record(name, "2026-W29", b"posted-2", 600) == b"posted-1"
    assert await ledger.read(name) == b"posted-2"


async def test_entries_are_read_many_at_once_and_listed_across_weeks(store: Store) -> None:
    ledger = store.port.ledger
    names = [f"2026-W{week}:slack:C{n}:acme/lumen" for week in (28, 29) for n in range(3)]
    for name in names:
        await ledger.record(name, name.split(":")[0], name.encode(), 600)
    assert await ledger.read_many([names[1], "2026-W29:slack:none:acme/lumen", names[4]]) \
        == [names[1].encode(), None, names[4].encode()]
    assert await ledger.read_many([]) == []
    assert sorted(await ledger.entries()) == sorted(name.encode() for name in names)


async def test_an_expired_entry_is_no_longer_listed(store: Store) -> None:
    # One lifetime for every entry, as the ledger gives them (Redis keeps a week's index
    # as long as the latest write's lifetime).
    ledger = store.port.ledger
    await ledger.record("2026-W29:slack:gone:acme/lumen", "2026-W29", b"gone", 1)
    await ledger.record("2026-W29:slack:also:acme/lumen", "2026-W29", b"also", 1)
    assert sorted(await ledger.entries()) == [b"also", b"gone"]
    await store.elapse(PAST_SHORT)
    assert await ledger.read("2026-W29:slack:gone:acme/lumen") is None
    assert await ledger.entries() == []
    await ledger.record("2026-W29:slack:kept:acme/lumen", "2026-W29", b"kept", 1)
    assert await ledger.entries() == [b"kept"]


# --- claims -------------------------------------------------------------------------------


async def test_a_claim_is_granted_once_until_it_expires(store: Store) -> None:
    claims, key = store.port.claims, store.keys.claim("seen:slack:Ev1")
    assert await claims.claim(key, b"pending:me", SHORT_MS)
    assert not await claims.claim(key, b"pending:you", SHORT_MS)
    assert await claims.get(key) == b"pending:me"
    await store.elapse(PAST_SHORT)
    assert await claims.get(key) is None
    assert await claims.claim(key, b"pending:you", LONG_MS)


async def test_values_are_put_kept_and_deleted(store: Store) -> None:
    claims = store.port.claims
    etag, alive = store.keys.claim("poll:acme/lumen:etag"), store.keys.claim("alive:me")
    await claims.put(etag, b"W/1")
    await claims.put(etag, b"W/2", only_new=True)  # set already: unchanged
    assert await claims.get(etag) == b"W/1"
    await claims.put(etag, b"W/3")
    assert await claims.get(etag) == b"W/3"
    await claims.put(alive, b"1", ttl_ms=SHORT_MS)
    assert await claims.exists(alive) and await claims.exists(etag)
    await store.elapse(PAST_SHORT)
    assert not await claims.exists(alive) and await claims.exists(etag)  # no expiry: kept
    await claims.delete(etag)
    assert await claims.get(etag) is None and not await claims.exists(etag)


async def test_one_taker_wins_a_dead_owners_claim_and_keeps_its_expiry(store: Store) -> None:
    claims, key = store.port.claims, store.keys.claim("notice:acme/lumen#7:slack:C1")
    assert await claims.claim(key, b"pending:dead", LONG_MS)
    takers = [f"pending:taker{n}".encode() for n in range(5)]
    left = await asyncio.gather(*(claims.take_over(key, b"pending:dead", taker, LONG_MS)
                                  for taker in takers))
    won = [taker for taker, ms in zip(takers, left, strict=True) if ms > 0]
    assert len(won) == 1 and sorted(left)[:4] == [0, 0, 0, 0]
    assert 0 < max(left) <= LONG_MS
    assert await claims.get(key) == won[0]
    # Another owner's claim is not taken over as the dead one's.
    assert await claims.take_over(key, b"pending:dead", b"pending:late", LONG_MS) == 0


async def test_a_claim_is_released_only_by_its_own_owner(store: Store) -> None:
    claims, key = store.port.claims, store.keys.claim("merge:acme/lumen#7:abc")
    assert await claims.claim(key, b"pending:owner", LONG_MS)
    await claims.release(key, b"pending:other")
    assert await claims.get(key) == b"pending:owner"
    await claims.release(key, b"pending:owner")
    assert await claims.get(key) is None


# --- pacing lanes ---------------------------------------------------------------------------


def lanes(store: Store, chat: str = "-100") -> list[str]:
    return [store.keys.pace("telegram", "telegram"),
            store.keys.pace("telegram", f"telegram:{chat}")]


async def test_turns_are_booked_one_interval_apart(store: Store) -> None:
    pacing, both = store.port.lanes, lanes(store)
    first = await pacing.book(both, [100_000, 1_000_000], 60_000_000)
    assert first.granted and first.wait_us <= 50_000
    # The chat's lane is busy for a second: the bot's next turn is not booked for it.
    busy = await pacing.book(both, [100_000, 1_000_000], 60_000_000)
    assert not busy.granted and 800_000 <= busy.wait_us <= 1_000_000
    # Another chat goes in the bot's next turn, a tenth of a second on.
    other = await pacing.book(lanes(store, "-200"), [100_000, 1_000_000], 60_000_000)
    assert other.granted and 50_000 <= other.wait_us <= 100_000
    # A turn further away than the caller may wait is not booked.
    far = await pacing.book(lanes(store, "-300"), [100_000, 1_000_000], 0)
    assert not far.granted and far.wait_us > 0


async def test_a_hold_keeps_every_lane_of_a_send_waiting(store: Store) -> None:
    pacing, both = store.port.lanes, lanes(store)
    await pacing.hold(both, 2_000_000)
    held = await pacing.book(both, [100_000, 1_000_000], 60_000_000)
    assert held.granted and 1_500_000 <= held.wait_us <= 2_000_000
    shorter = await pacing.book(lanes(store, "-200"), [100_000, 1_000_000], 1_000_000)
    assert not shorter.granted


async def test_an_idle_lane_costs_nothing_once_its_turn_passed(store: Store) -> None:
    pacing, both = store.port.lanes, lanes(store)
    assert (await pacing.book(both, [100_000, 200_000], 60_000_000)).granted
    await store.elapse(PAST_SHORT)
    again = await pacing.book(both, [100_000, 200_000], 60_000_000)
    assert again.granted and again.wait_us <= 50_000


SECOND_US = 1_000_000
HORIZON_US = 1_500_000
"""Turns a second apart, booked at most a second and a half ahead: the third send in a
row is beyond the horizon."""


def place(store: Store, ticket: str | None, keep_ms: int = LONG_MS) -> LinePlace:
    """A place in the telegram bot lane's line (`ticket` None: counts behind it)."""
    order, alive = store.keys.pace_line("telegram")
    return LinePlace(order, alive, ticket, keep_ms)


async def book_in_line(store: Store, chat: str, ticket: str | None, *,
                       keep_ms: int = LONG_MS) -> LaneBooking:
    return await store.port.lanes.book(lanes(store, chat), [SECOND_US, 1_000], HORIZON_US,
                                       place=place(store, ticket, keep_ms))


def about(wait_us: int, seconds: float) -> bool:
    """`wait_us` is `seconds` away, give or take the time the test's steps took."""
    return seconds * SECOND_US - 400_000 <= wait_us <= seconds * SECOND_US + 50_000


async def test_sends_beyond_the_horizon_wait_in_line_in_the_order_they_came(
        store: Store) -> None:
    assert (await book_in_line(store, "-1", "a")).granted
    assert (await book_in_line(store, "-2", "b")).granted  # a second on
    c = await book_in_line(store, "-3", "c")
    d = await book_in_line(store, "-4", "d")
    # Beyond the horizon: not booked; each told when its turn would come, the sends
    # ahead of it in line going first.
    assert (c.granted, c.ahead, d.granted, d.ahead) == (False, 0, False, 1)
    assert about(c.wait_us, 2) and about(d.wait_us, 3)
    # A send without a ticket counts behind the whole line and takes no place in it.
    behind = await book_in_line(store, "-5", None)
    assert (behind.granted, behind.ahead) == (False, 2) and about(behind.wait_us, 4)
    assert (await book_in_line(store, "-4", "d")).ahead == 1
    await store.elapse(1.0)
    # The turn after the lane's next one is within the horizon now, but it is c's: d,
    # asking first, is not booked ahead of it.
    first = await book_in_line(store, "-4", "d")
    assert (first.granted, first.ahead) == (False, 1)
    took = await book_in_line(store, "-3", "c")
    assert took.granted and took.ahead == 0 and about(took.wait_us, 1)
    # Booked, c left the line: d is first now.
    assert (await book_in_line(store, "-4", "d")).ahead == 0


async def test_a_place_not_asked_for_lapses_and_one_given_up_is_gone(store: Store) -> None:
    assert (await book_in_line(store, "-1", None)).granted
    assert (await book_in_line(store, "-2", None)).granted
    # The waiter of c dies: its place is kept a second (SHORT_MS), not asked for again.
    assert not (await book_in_line(store, "-3", "c", keep_ms=SHORT_MS)).granted
    assert (await book_in_line(store, "-4", "d")).ahead == 1
    assert (await book_in_line(store, "-5", "e")).ahead == 2
    await store.port.lanes.leave(place(store, "d"))
    await store.elapse(PAST_SHORT)
    # c's place lapsed and d gave its own up: e goes next, in the lane's next turn.
    took = await book_in_line(store, "-5", "e")
    assert took.granted and took.ahead == 0
    assert (await book_in_line(store, "-6", None)).ahead == 0  # nobody left in line


# --- shared values ----------------------------------------------------------------------------


async def test_a_shared_value_is_kept_for_its_lifetime(store: Store) -> None:
    values = store.port.values
    kept = store.keys.weekly_digest("acme/lumen", "2026-W29", "en", ())
    brief = store.keys.weekly_digest("acme/lumen", "2026-W29", "zh", ())
    await values.put(kept, b"digest-en", 600)
    await values.put(brief, b"digest-zh", 1)
    assert await values.get(kept) == b"digest-en"
    await store.elapse(PAST_SHORT)
    assert await values.get(brief) is None and await values.get(kept) == b"digest-en"


async def test_the_weeks_of_a_repository_are_listed_until_their_data_expires(
        store: Store) -> None:
    values = store.port.values
    await values.note_week("acme/lumen", "2026-W28", 600)
    await values.note_week("acme/lumen", "2026-W29", 1)
    await values.note_week("acme/other", "2026-W27", 600)
    assert await values.weeks("acme/lumen") == {"2026-W28", "2026-W29"}
    await store.elapse(PAST_SHORT)
    assert await values.weeks("acme/lumen") == {"2026-W28"}
    assert await values.weeks("acme/other") == {"2026-W27"}
    assert await values.weeks("acme/none") == set()


# --- notice batches ----------------------------------------------------------------------------


def batch_keys(store: Store, channel: str = "slack:C1") -> tuple[str, str]:
    return store.keys.notice_batch(channel), store.keys.notice_batch_out(channel)


def marker(store: Store, number: int, channel: str = "slack:C1") -> str:
    return store.keys.claim(store.keys.batched_notice(channel, "acme/lumen", number))


async def test_a_pr_joins_a_channels_batch_once(store: Store) -> None:
    batches = store.port.batches
    open_batch, out = batch_keys(store)

    async def add(number: int, batch_id: str, due: int) -> bool:
        return await batches.add(marker(store, number), open_batch, marker_ttl_ms=LONG_MS,
                                 field=f"pr:{number}", item=f"item {number}".encode(),
                                 header={".id": batch_id.encode(), ".due": str(due).encode()})

    assert await add(1, "b1", 1000)
    assert not await add(1, "b2", 5000)  # seen before: not added again
    assert await add(2, "b2", 5000)  # joins the open batch, whose header stays
    assert await batches.take(open_batch, out, due_field=".due", now_ms=999) == {}
    taken = await batches.take(open_batch, out, due_field=".due", now_ms=1000)
    assert taken == {".id": b"b1", ".due": b"1000", "pr:1": b"item 1", "pr:2": b"item 2"}


async def test_one_batch_is_out_at_a_time_and_dropped_by_its_id(store: Store) -> None:
    batches = store.port.batches
    open_batch, out = batch_keys(store)

    async def add(number: int, batch_id: str) -> None:
        assert await batches.add(marker(store, number), open_batch, marker_ttl_ms=LONG_MS,
                                 field=f"pr:{number}", item=b"x",
                                 header={".id": batch_id.encode(), ".due": b"0"})

    await add(1, "b1")
    first = await batches.take(open_batch, out, due_field=".due", now_ms=10)
    await add(2, "b2")  # a merge while b1 is sent opens the next batch
    # b1's sender may have died: b1 is what is out until it is dropped.
    assert await batches.take(open_batch, out, due_field=".due", now_ms=10) == first
    await batches.drop(out, id_field=".id", batch_id="b2")  # not the batch out
    assert await batches.take(open_batch, out, due_field=".due", now_ms=10) == first
    await batches.drop(out, id_field=".id", batch_id="b1")
    second = await batches.take(open_batch, out, due_field=".due", now_ms=10)
    assert second[".id"] == b"b2" and "pr:2" in second and "pr:1" not in second


# --- the store itself ---------------------------------------------------------------------------


async def test_a_store_that_runs_scripts_has_no_problem_and_is_healthy(store: Store) -> None:
    assert await store.port.problem() is None
    health = await store.port.health(timeout=5)
    assert health.ok and health.error is None
    assert (health.masters is not None) is (store.kind == "cluster")
    assert store.port.shared is (store.kind != "memory")


@pytest.mark.redis
async def test_redis_away_is_store_unavailable_naming_the_error() -> None:
    from bot.store.redis.coordination import RedisCoordination
    from testkit.redis_server import free_port

    away = RedisCoordination.from_url(f"redis://127.0.0.1:{free_port()}")
    try:
        with pytest.raises(StoreUnavailable) as raised:
            await away.claims.claim("k", b"v", LONG_MS)
        assert raised.value.reason == "ConnectionError"
        health = await away.health(timeout=2)
        assert not health.ok and health.error == "ConnectionError"
    finally:
        await away.close()
