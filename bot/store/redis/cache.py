"""The cache's entries in Redis, typed: `Cache` reads and writes them, and a Redis
failure is logged and taken as a miss (after failures in a row, Redis is left alone for
a while). `bot.store.cache` reads through it.

What is kept (keys versioned under `prdigest:v2:` and tagged `{repo}`, see
`bot.store.keys`):
- `pr:{number}:{updated_at}` - one PR as fetched. Keyed by `updated_at`, so a
  PR that changed on GitHub is simply a different entry.
- `week:{week}:{tz}` - which PRs (number, updated_at) a week held when it was last
  fetched, when that was, and until when it counts as fresh: the current week briefly
  (`cache.current_week_ttl_seconds`), past weeks long (`cache.past_week_ttl_seconds`).
- `trend-week:{week}:{tz}` - a week read for the trends only (`bot.store.trend_weeks`).
- `pull:{number}` - the latest `updated_at` seen of a single PR.
- `digest:report:{week}:{lang}` - finished report digests.
- `weeks` - the index of weeks held (a sorted set scored by expiry), for the report
  index page: no SCAN, which on a cluster would see one node's keys.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import msgspec
import redis

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, secret
from bot.events import CacheLookup, Events
from bot.models import PullRequest
from bot.store.keys import KEY_PREFIX, Keys
from bot.store.redis.client import REDIS_ERRORS, sync_client
from bot.store.redis.weeks_index import note_week
from bot.store.trend_weeks import TrendEntry

log = logging.getLogger(__name__)

# Redis calls that fail in a row before the cache leaves Redis alone for its cooldown.
FAILURES_BEFORE_COOLDOWN = 3

T = TypeVar("T")


class WeekEntry(msgspec.Struct, frozen=True, kw_only=True):
    """What a week held at its last fetch, and how long that counts as fresh."""

    fetched_at: datetime
    fresh_until: datetime
    pulls: tuple[tuple[int, str], ...]


class CachedPointer(msgspec.Struct, frozen=True, kw_only=True):
    """The latest version of one PR the cache holds."""

    updated_at: str
    fetched_at: datetime
    fresh_until: datetime


def stamp(moment: datetime | None) -> str:
    """`updated_at` as a key part: epoch seconds, or `none` when GitHub gave none."""
    return "none" if moment is None else str(int(moment.timestamp()))


class Cache:
    """Typed access to the keys above; every Redis error becomes a logged miss. Each
    lookup of a week, PR, pointer or report digest is a `CacheLookup` on `events`
    (`/metrics` counts them). The cooldown after failures is on `clock`."""

    def __init__(
        self, client: redis.Redis, *, prefix: str = KEY_PREFIX, cooldown_seconds: float = 30.0,
        failures_before_cooldown: int = FAILURES_BEFORE_COOLDOWN,
        events: Events | None = None, clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.client = client
        self.clock = clock
        self.events = events or Events()
        self.prefix = prefix
        self.keys = Keys(prefix)
        # After failures in a row Redis is left alone for a while: each attempt on a
        # dead server costs seconds of connection retries, and a fetch makes several.
        # One failure alone (a failover's moment, one reset connection) does not: the
        # next call goes to Redis again, so a failover does not cost 30 s of fetches.
        self.cooldown_seconds = cooldown_seconds
        self.failures_before_cooldown = max(1, failures_before_cooldown)
        self._failures = 0
        self._down_until = 0.0
        self._pull_decoder = msgspec.json.Decoder(PullRequest)
        self._entry_decoder = msgspec.json.Decoder(WeekEntry)
        self._pointer_decoder = msgspec.json.Decoder(CachedPointer)
        self._encoder = msgspec.json.Encoder()

    @classmethod
    def from_url(cls, url: str, variable: str = "REDIS_URL", *, prefix: str = KEY_PREFIX,
                 clock: Clock = SYSTEM_CLOCK) -> Cache:
        """The cache at `url` (a `ConfigError` naming `variable` when it is not one)."""
        return cls(sync_client(url, variable), prefix=prefix, clock=clock)

    def close(self) -> None:
        self.client.close()

    def _safe(self, what: str, fn: Callable[[], T], default: T) -> T:
        if self.clock.monotonic() < self._down_until:
            return default
        try:
            result = fn()
        except REDIS_ERRORS as exc:
            self._failures += 1
            if self._failures < self.failures_before_cooldown:
                log.warning("cache %s failed, treated as a miss: %s", what, exc)
                return default
            log.warning("cache %s failed %d times in a row, going on without it for %.0f s: %s",
                        what, self._failures, self.cooldown_seconds, exc)
            self._down_until = self.clock.monotonic() + self.cooldown_seconds
            self._failures = 0
            return default
        self._failures = 0
        return result

    # -- weeks --

    def _told(self, kind: str, found: T) -> T:
        self.events.emit(CacheLookup(kind, found is not None))
        return found

    def get_week(self, repo: str, week: str, tz: str) -> WeekEntry | None:
        return self._told("week", self._get_week(repo, week, tz))

    def _get_week(self, repo: str, week: str, tz: str) -> WeekEntry | None:
        raw = self._safe("read", lambda: self.client.get(self.keys.week(repo, week, tz)), None)
        if raw is None:
            return None
        try:
            return self._entry_decoder.decode(raw)
        except msgspec.DecodeError:
            return None

    def put_week(self, repo: str, week: str, tz: str, entry: WeekEntry, ttl: int) -> None:
        key = self.keys.week(repo, week, tz)
        data = self._encoder.encode(entry)

        def write() -> None:
            self.client.set(key, data, ex=ttl)
            note_week(self.client, self.keys, repo, week, ttl)

        self._safe("write", write, None)

    # -- PRs --

    def _pull_key(self, repo: str, number: int, stamp: str) -> str:
        return self.keys.pull_version(repo, number, stamp)

    def get_pulls(self, repo: str, refs: Sequence[tuple[int, str]]) -> dict[int, PullRequest]:
        """The cached PRs among `refs` (number, updated_at stamp); missing ones are absent."""
        found = self._get_pulls(repo, refs)
        for hit in [True] * len(found) + [False] * (len(refs) - len(found)):
            self.events.emit(CacheLookup("pull", hit))
        return found

    def _get_pulls(self, repo: str, refs: Sequence[tuple[int, str]]
                   ) -> dict[int, PullRequest]:
        if not refs:
            return {}
        keys = [self._pull_key(repo, number, stamp) for number, stamp in refs]
        raws: list[Any] = self._safe("read", lambda: list(self.client.mget(keys)), [])
        found: dict[int, PullRequest] = {}
        for raw in raws:
            if raw is None:
                continue
            try:
                pull = self._pull_decoder.decode(raw)
            except msgspec.DecodeError:
                continue
            found[pull.number] = pull
        return found

    def put_pulls(self, repo: str, pulls: Iterable[PullRequest], ttl: int) -> None:
        def write() -> None:
            with self.client.pipeline(transaction=False) as pipe:
                for pull in pulls:
                    key = self._pull_key(repo, pull.number, stamp(pull.updated_at))
                    pipe.set(key, self._encoder.encode(pull), ex=ttl)
                pipe.execute()

        self._safe("write", write, None)

    def touch_pulls(self, repo: str, refs: Iterable[tuple[int, str]], ttl: int) -> None:
        """Extend the life of entries that are still in use, without rewriting them."""
        def touch() -> None:
            with self.client.pipeline(transaction=False) as pipe:
                for number, stamp in refs:
                    pipe.expire(self._pull_key(repo, number, stamp), ttl)
                pipe.execute()

        self._safe("write", touch, None)

    def get_pointer(self, repo: str, number: int) -> CachedPointer | None:
        return self._told("pointer", self._get_pointer(repo, number))

    def _get_pointer(self, repo: str, number: int) -> CachedPointer | None:
        raw = self._safe("read", lambda: self.client.get(self.keys.pointer(repo, number)), None)
        if raw is None:
            return None
        try:
            return self._pointer_decoder.decode(raw)
        except msgspec.DecodeError:
            return None

    def drop_pointer(self, repo: str, number: int) -> None:
        self._safe("write", lambda: self.client.delete(self.keys.pointer(repo, number)), None)

    def put_pointer(self, repo: str, number: int, pointer: CachedPointer, ttl: int) -> None:
        key = self.keys.pointer(repo, number)
        data = self._encoder.encode(pointer)
        self._safe("write", lambda: self.client.set(key, data, ex=ttl), None)

    # -- digests --

    def get_report(self, repo: str, week: str, lang: str) -> bytes | None:
        """A report page's finished digest, or None."""
        return self._told("digest", self._get_report(repo, week, lang))

    def _get_report(self, repo: str, week: str, lang: str) -> bytes | None:
        key = self.keys.report_digest(repo, week, lang)
        raw = self._safe("read", lambda: self.client.get(key), None)
        if raw is None:
            return None
        return raw.encode() if isinstance(raw, str) else bytes(raw)

    def put_report(self, repo: str, week: str, lang: str, data: bytes, ttl: int) -> None:
        key = self.keys.report_digest(repo, week, lang)

        def write() -> None:
            self.client.set(key, data, ex=ttl)
            note_week(self.client, self.keys, repo, week, ttl)

        self._safe("write", write, None)

    # -- narrations --

    def get_narration(self, kind: str, digest: str) -> bytes | None:
        """A model's answer kept under its input's hash (`bot.narrate`), or None."""
        raw = self._safe("read", lambda: self.client.get(self.keys.narration(kind, digest)),
                         None)
        if raw is None:
            return None
        return raw.encode() if isinstance(raw, str) else bytes(raw)

    def trends(self) -> TrendWeeks:
        """The weeks read for the trends only, in the same Redis."""
        return TrendWeeks(self.client, self.keys)

    def put_narration(self, kind: str, digest: str, data: bytes, ttl: int) -> None:
        key = self.keys.narration(kind, digest)
        self._safe("write", lambda: self.client.set(key, data, ex=ttl), None)


def cache_from_env(config: Config, clock: Clock = SYSTEM_CLOCK) -> Cache | None:
    """The cache at the URL in the env var `config.cache.url_env`; None when unset.
    A malformed URL is a `ConfigError` naming the variable."""
    url = secret(config.cache.url_env)
    return Cache(sync_client(url, config.cache.url_env), clock=clock) if url else None


class TrendWeeks:
    """The `trend-week:` keys (`bot.store.trend_weeks`); a Redis error is a logged miss
    (the read costs a few points, never a digest)."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys
        self._decoder = msgspec.json.Decoder(TrendEntry)

    def get(self, repo: str, week: str, tz: str) -> TrendEntry | None:
        try:
            raw = self.client.get(self.keys.trend_week(repo, week, tz))
        except REDIS_ERRORS as exc:
            log.warning("trend week %s %s unreadable: %s", repo, week, type(exc).__name__)
            return None
        if raw is None:
            return None
        try:
            return self._decoder.decode(raw)
        except msgspec.DecodeError:
            return None

    def fresh(self, repo: str, week: str, tz: str, now: datetime) -> bool:
        """Whether the week's counts are kept fresh (reading them costs GitHub nothing)."""
        entry = self.get(repo, week, tz)
        return entry is not None and now < entry.fresh_until

    def put(self, repo: str, week: str, tz: str, entry: TrendEntry, ttl: int) -> None:
        try:
            self.client.set(self.keys.trend_week(repo, week, tz), msgspec.json.encode(entry),
                            ex=ttl)
        except REDIS_ERRORS as exc:
            log.warning("trend week %s %s not kept: %s", repo, week, type(exc).__name__)
