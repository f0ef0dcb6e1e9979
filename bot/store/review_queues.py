"""The PRs waiting for review, kept for minutes: a chat asking "what is waiting for
review" again within `chat.pending_minutes` (on any replica) costs GitHub nothing.

Read-through: a fresh entry is answered as is; otherwise one replica claims the fetch
(a set-once key that lapses by itself) while the others wait briefly for its entry
instead of asking GitHub too. Redis failing counts as a miss: the question is still
answered, from GitHub.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence

import msgspec
import redis

from bot.source import ReviewQueue
from bot.store.client import REDIS_ERRORS
from bot.store.keys import KEY_PREFIX, Keys

log = logging.getLogger(__name__)

FETCH_CLAIM_SECONDS = 15
"""How long a replica's claim to fetch a queue holds (a GitHub search takes a second)."""
WAIT_STEPS = (0.1, 0.2, 0.3, 0.5, 0.5, 1.0, 1.0, 1.0)
"""Seconds between looks for the entry another replica is fetching (4.6 s in all)."""

_DECODER = msgspec.json.Decoder(ReviewQueue)


class ReviewQueues:
    """Review queues by the repositories they cover, in Redis (`client`) or, without
    one, fetched each time. `sleep` is injectable for tests."""

    def __init__(self, client: redis.Redis | None, *, prefix: str = KEY_PREFIX,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.keys = Keys(prefix)
        self.sleep = sleep
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
                    self.sleep(step)
                    kept = self._get(key)
                    if kept is not None:
                        return kept
            fresh = fetch()
            self._put(key, fresh, ttl_seconds)
            return fresh

    def _get(self, key: str) -> ReviewQueue | None:
        if self.client is None:
            return None
        try:
            raw = self.client.get(key)
        except REDIS_ERRORS as exc:
            log.warning("review queue %s unreadable: %s", key, exc)
            return None
        if raw is None:
            return None
        try:
            return _DECODER.decode(raw if isinstance(raw, bytes) else str(raw).encode())
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    def _claim(self, key: str) -> bool:
        """Whether this replica fetches (True also when Redis cannot tell)."""
        if self.client is None:
            return True
        try:
            return bool(self.client.set(key, uuid.uuid4().hex, nx=True,
                                        ex=FETCH_CLAIM_SECONDS))
        except REDIS_ERRORS:
            return True

    def _put(self, key: str, queue: ReviewQueue, ttl_seconds: int) -> None:
        if self.client is None:
            return
        try:
            self.client.set(key, msgspec.json.encode(queue), ex=max(ttl_seconds, 1))
        except REDIS_ERRORS as exc:
            log.warning("review queue %s not kept: %s", key, exc)
