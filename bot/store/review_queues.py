"""The PRs waiting for review, kept for minutes: a chat asking "what is waiting for
review" again within `chat.pending_minutes` (on any replica) costs GitHub nothing.

Read-through: a fresh entry is answered as is; otherwise one replica claims the fetch
(a set-once key that lapses by itself) while the others wait briefly for its entry
instead of asking GitHub too. The entries and the claim are kept in Redis
(`bot.store.redis.review_queues`); a store that fails counts as a miss: the question is
still answered, from GitHub.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

import msgspec

from bot.clock import SYSTEM_CLOCK, Clock
from bot.source import ReviewQueue
from bot.store.coordination import StoreUnavailable
from bot.store.keys import KEY_PREFIX, Keys

log = logging.getLogger(__name__)

FETCH_CLAIM_SECONDS = 15
"""How long a replica's claim to fetch a queue holds (a GitHub search takes a second)."""
WAIT_STEPS = (0.1, 0.2, 0.3, 0.5, 0.5, 1.0, 1.0, 1.0)
"""Seconds between looks for the entry another replica is fetching (4.6 s in all)."""

_DECODER = msgspec.json.Decoder(ReviewQueue)


class ReviewQueueStore(Protocol):
    """Where the queues are kept, shared by the replicas. Synchronous: callers run it in
    a worker thread. Unreachable: `StoreUnavailable`."""

    def get(self, key: str) -> bytes | None:
        """The entry at `key`, or None."""
        ...

    def claim(self, key: str, ttl_seconds: int) -> bool:
        """Set `key` for `ttl_seconds` unless it is set; whether it was."""
        ...

    def put(self, key: str, value: bytes, ttl_seconds: int) -> None:
        """Keep `value` at `key` for `ttl_seconds`."""
        ...


class ReviewQueues:
    """Review queues by the repositories they cover, kept in `store` or, without one,
    fetched each time. `clock` spaces the looks for another replica's entry."""

    def __init__(self, store: ReviewQueueStore | None, *, prefix: str = KEY_PREFIX,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.store = store
        self.keys = Keys(prefix)
        self.clock = clock
        self._local: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def queue(self, repos: Sequence[str], fetch: Callable[[], ReviewQueue], *,
              ttl_seconds: int) -> ReviewQueue:
        """The queue of `repos`: kept, or fetched once (`fetch`) and kept for
        `ttl_seconds`. Synchronous: callers run it in a worker thread."""
        key = self.keys.pending_reviews(repos)
        claim = self.keys.pending_reviews_fetch(repos)
        with self._guard:
            lock = self._local.setdefault(key, threading.Lock())
        with lock:  # one fetch per process at a time; the others find its entry
            kept = self._get(key)
            if kept is not None:
                return kept
            if not self._claim(claim):
                for step in WAIT_STEPS:
                    self.clock.pause(step)
                    kept = self._get(key)
                    if kept is not None:
                        return kept
            fresh = fetch()
            self._put(key, fresh, ttl_seconds)
            return fresh

    def _get(self, key: str) -> ReviewQueue | None:
        if self.store is None:
            return None
        try:
            raw = self.store.get(key)
        except StoreUnavailable as exc:
            log.warning("review queue %s unreadable: %s", key, exc)
            return None
        if raw is None:
            return None
        try:
            return _DECODER.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    def _claim(self, key: str) -> bool:
        """Whether this replica fetches (True also when the store cannot tell)."""
        if self.store is None:
            return True
        try:
            return self.store.claim(key, FETCH_CLAIM_SECONDS)
        except StoreUnavailable:
            return True

    def _put(self, key: str, queue: ReviewQueue, ttl_seconds: int) -> None:
        if self.store is None:
            return
        try:
            self.store.put(key, msgspec.json.encode(queue), max(ttl_seconds, 1))
        except StoreUnavailable as exc:
            log.warning("review queue %s not kept: %s", key, exc)
