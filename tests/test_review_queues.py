"""The review queues' read-through rules, on the store in memory and a virtual clock: a
queue kept is answered as is, one replica fetches while the others wait for its entry
(on the clock, so the test waits for nothing), a fetch that never lands is done after
the waits, and a store that fails costs only the keeping. The same rules on a real
Redis, across two replicas: `tests/test_github_lookups.py`."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import msgspec
import pytest

from bot.source import QueuedPull, ReviewQueue
from bot.store.keys import Keys
from bot.store.review_queues import FETCH_CLAIM_SECONDS, WAIT_STEPS, ReviewQueues
from testkit.clock import VirtualClock
from testkit.fakes.chat import InMemoryReviewQueues

REPOS = ("acme/lumen", "Acme/Tools")
TTL = 600
AT = datetime(2026, 7, 22, 4, 0, tzinfo=UTC)
KEYS = Keys()


def queue(*numbers: int) -> ReviewQueue:
    pulls = tuple(QueuedPull(repository="acme/lumen", number=n, title=f"PR {n}",
                             url=f"https://github.com/acme/lumen/pull/{n}", author="dev",
                             created_at=AT) for n in numbers)
    return ReviewQueue(pulls=pulls, total=len(pulls), fetched_at=AT)


class Fetches:
    """A fetch that answers `answer` and counts its calls."""

    def __init__(self, answer: ReviewQueue) -> None:
        self.answer = answer
        self.calls = 0

    def __call__(self) -> ReviewQueue:
        self.calls += 1
        return self.answer


class AnotherReplicaFetching(InMemoryReviewQueues):
    """The store while another replica holds the fetch's claim and puts its entry
    `after` seconds of the clock from now (None: never)."""

    def __init__(self, clock: VirtualClock, entry: ReviewQueue, after: float | None) -> None:
        super().__init__(clock)
        self.entry = entry
        self.lands_at: float | None = None
        assert self.claim(KEYS.pending_reviews_fetch(REPOS), FETCH_CLAIM_SECONDS)
        self.lands_at = None if after is None else clock.monotonic() + after

    def get(self, key: str) -> bytes | None:
        if self.lands_at is not None and self.clock.monotonic() >= self.lands_at:
            self.put(KEYS.pending_reviews(REPOS), msgspec.json.encode(self.entry), TTL)
            self.lands_at = None
        return super().get(key)


def test_a_kept_queue_is_answered_on_any_replica_until_it_expires() -> None:
    clock = VirtualClock()
    store = InMemoryReviewQueues(clock)
    here, there = ReviewQueues(store, clock=clock), ReviewQueues(store, clock=clock)
    fetch = Fetches(queue(11, 15))
    assert here.queue(REPOS, fetch, ttl_seconds=TTL) == queue(11, 15)
    clock.advance(TTL - 1)
    # The same repositories, named in another order and case: the same entry.
    assert there.queue(("acme/tools", "acme/lumen"), fetch, ttl_seconds=TTL) == queue(11, 15)
    assert fetch.calls == 1 and clock.slept == []
    clock.advance(1)
    assert there.queue(REPOS, fetch, ttl_seconds=TTL) == queue(11, 15)
    assert fetch.calls == 2


def test_a_replica_finding_the_fetch_claimed_waits_for_the_others_entry() -> None:
    clock = VirtualClock()
    store = AnotherReplicaFetching(clock, queue(7), after=0.5)
    fetch = Fetches(queue(99))
    assert ReviewQueues(store, clock=clock).queue(REPOS, fetch, ttl_seconds=TTL) == queue(7)
    assert fetch.calls == 0
    assert clock.slept == list(WAIT_STEPS[:3])  # 0.1 + 0.2 + 0.3 s: there at the third look


def test_a_fetch_that_never_lands_is_done_after_the_waits_and_kept() -> None:
    clock = VirtualClock()
    store = AnotherReplicaFetching(clock, queue(7), after=None)
    fetch = Fetches(queue(99))
    queues = ReviewQueues(store, clock=clock)
    assert queues.queue(REPOS, fetch, ttl_seconds=TTL) == queue(99)
    assert fetch.calls == 1 and clock.slept == list(WAIT_STEPS)
    assert queues.queue(REPOS, fetch, ttl_seconds=TTL) == queue(99)
    assert fetch.calls == 1


def test_a_store_that_fails_still_answers_from_github(caplog: pytest.LogCaptureFixture
                                                      ) -> None:
    clock = VirtualClock()
    store = InMemoryReviewQueues(clock)
    store.fail = True
    fetch = Fetches(queue(3))
    with caplog.at_level(logging.WARNING, logger="bot.store.review_queues"):
        answers = [ReviewQueues(store, clock=clock).queue(REPOS, fetch, ttl_seconds=TTL)
                   for _ in range(2)]
    assert answers == [queue(3), queue(3)] and fetch.calls == 2
    assert clock.slept == []  # no claim could be read: this replica fetches at once
    assert "not kept" in caplog.text and "unreadable" in caplog.text


def test_without_a_store_every_question_is_fetched() -> None:
    fetch = Fetches(queue(1))
    queues = ReviewQueues(None, clock=VirtualClock())
    assert [queues.queue(REPOS, fetch, ttl_seconds=TTL) for _ in range(2)] == [queue(1)] * 2
    assert fetch.calls == 2
