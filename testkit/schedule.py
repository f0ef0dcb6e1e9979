"""Doubles for the schedule tests: in-memory platforms, a poster per replica, a source
that counts, and a replica's store that a test can kill.

`FakePlatforms` keeps what each platform accepted. Like Feishu, the `feishu` platform
drops a message whose idempotency key (the message `uuid`) it accepted within the
last hour; Slack and Telegram take every message.

A killed replica behaves as a SIGKILLed process does: from the kill on, none of its
store's steps and none of its posts happen (they raise `ReplicaKilled`), so it
neither writes the ledger nor releases its locks - they expire.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.clock import Clock
from bot.config import ChannelConfig, Config, parse_config
from bot.delivery.results import PostResult
from bot.delivery.schedule import Scheduler, ScheduleSettings
from bot.digests import Digests
from bot.models import Digest, Snapshot
from bot.source import SnapshotSource, WeekData
from bot.store.coordination import Coordination, StoreUnavailable
from bot.store.redis.coordination import RedisCoordination
from testkit.coordination import GuardedPort

FEISHU_WINDOW = timedelta(hours=1)


class ReplicaKilled(StoreUnavailable):
    """What a dead replica's store steps and posts raise."""

    def __init__(self, detail: str) -> None:
        super().__init__("ReplicaKilled", detail)


@dataclass(frozen=True)
class Delivery:
    platform: str
    channel: str
    repo: str
    week: str
    lang: str
    delivery_key: str
    message_id: str
    replica: str
    focus: tuple[str, ...]


@dataclass
class FakePlatforms:
    """Every platform's received messages, shared by all replicas."""

    clock: Clock
    delivered: list[Delivery] = field(default_factory=list)
    dropped: list[Delivery] = field(default_factory=list)
    _keys: dict[tuple[str, str], tuple[datetime, str]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def accept(self, channel: ChannelConfig, digest: Digest, key: str, replica: str) -> str:
        delivery = Delivery(
            platform=channel.platform, channel=channel.key, repo=digest.repository,
            week=digest.week, lang=digest.lang, delivery_key=key,
            message_id=f"{channel.platform}-{next(self._ids)}", replica=replica,
            focus=tuple(t.name for t in digest.topics),
        )
        if channel.platform == "feishu":
            # Feishu answers a repeated uuid with the first message, sending nothing new.
            seen = self._keys.get((channel.key, key))
            if seen is not None and self.clock.now() - seen[0] < FEISHU_WINDOW:
                self.dropped.append(delivery)
                return seen[1]
            self._keys[(channel.key, key)] = (self.clock.now(), delivery.message_id)
        self.delivered.append(delivery)
        return delivery.message_id

    def counts(self) -> Counter[tuple[str, str, str]]:
        """Messages received per (week, channel, repo)."""
        return Counter((d.week, d.channel, d.repo) for d in self.delivered)


class KillSwitch:
    """Kills a replica at a chosen point: its `kill_at_call`-th step of the store, or a
    poster phase."""

    def __init__(self) -> None:
        self.dead = False
        self.store_calls = 0
        self.kill_at_call: int | None = None
        self.kill_in_post: str | None = None  # "before-accept" | "after-accept"
        self.killed_after_accept: list[tuple[str, str, str]] = []

    def check(self) -> None:
        if self.dead:
            raise ReplicaKilled("replica is dead")

    def on_store_call(self) -> None:
        self.check()
        self.store_calls += 1
        if self.kill_at_call is not None and self.store_calls >= self.kill_at_call:
            self.kill()

    def kill(self) -> None:
        self.dead = True
        raise ReplicaKilled("replica killed")


def killable(port: Coordination, switch: KillSwitch) -> GuardedPort:
    """The replica's store, cut off for good once its switch kills it."""
    return GuardedPort(port, lambda step, args: switch.on_store_call())


class FakePoster:
    """One replica's way to the shared fake platforms (the `Poster` protocol)."""

    def __init__(self, platforms: FakePlatforms, replica: str, *, switch: KillSwitch | None = None,
                 latency: float = 0.0,
                 before_accept: Callable[[ChannelConfig], Awaitable[None]] | None = None,
                 fail: Callable[[ChannelConfig], str | None] | None = None) -> None:
        self.platforms = platforms
        self.replica = replica
        self.switch = switch or KillSwitch()
        self.latency = latency
        self.before_accept = before_accept
        self.fail = fail
        self.calls = 0

    async def post_digest(self, channel: ChannelConfig, digest: Digest, *,
                          delivery_key: str) -> list[str]:
        self.calls += 1
        self.switch.check()
        if self.latency:
            await self.platforms.clock.sleep(self.latency)
        if self.before_accept is not None:
            await self.before_accept(channel)
        if self.switch.kill_in_post == "before-accept":
            self.switch.kill()
        self.switch.check()
        if self.fail is not None and (reason := self.fail(channel)):
            raise RuntimeError(reason)
        message_id = self.platforms.accept(channel, digest, delivery_key, self.replica)
        if self.switch.kill_in_post == "after-accept":
            self.switch.killed_after_accept.append((digest.week, channel.key, channel.repo))
            self.switch.kill()
        return [message_id]

    def idempotency_window(self, channel: ChannelConfig) -> timedelta | None:
        return FEISHU_WINDOW if channel.platform == "feishu" else None

    async def complete_delivery(self, channel: ChannelConfig, digest: Digest, *,
                                delivery_key: str, since: datetime) -> list[str] | None:
        """These platforms cannot tell whether a delivery arrived."""
        return None


class CountingSource(SnapshotSource):
    """Serves one snapshot for every week and counts the week reads."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__(snapshot)
        self.reads: Counter[tuple[str, str]] = Counter()

    def fetch_week(self, repo: str, week: str) -> WeekData:
        self.reads[(repo, week)] += 1
        return WeekData(snapshot=Snapshot(repository=repo, fetched_at=self.snapshot.fetched_at,
                                          pulls=self.snapshot.pulls))


def make_config(channels: Sequence[dict[str, Any]], *, repos: Sequence[str] = ("acme/lumen",),
                catch_up_hours: float = 12.0) -> Config:
    return parse_config({
        "repos": {name: {"timezone": "Asia/Shanghai",
                         "topics": {"npu": {"keywords": ["npu", "ascend"]}}} for name in repos},
        "channels": list(channels),
        "server": {"catch_up_hours": catch_up_hours},
    })


def at(text: str) -> datetime:
    """An aware UTC moment from `2026-07-20T01:00`."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


REPO = "acme/lumen"


# Monday 2026-07-20 09:00 in Shanghai; the week owed is 2026-W29.
SHANGHAI_MONDAY_9 = at("2026-07-20T01:00")


def channel(platform: str, id: str, *, tz: str = "Asia/Shanghai", schedule: str = "0 9 * * MON",
            lang: str = "zh", topics: tuple[str, ...] = (), repo: str = REPO) -> dict[str, Any]:
    return {"platform": platform, "id": id, "repo": repo, "timezone": tz, "schedule": schedule,
            "lang": lang, "topics": list(topics)}


@asynccontextmanager
async def redis_port(url: str) -> AsyncIterator[RedisCoordination]:
    """The coordination port on the Redis at `url`, closed after."""
    port = RedisCoordination.from_url(url)
    try:
        yield port
    finally:
        await port.close()


LIVE_LOCK_SECONDS = 5.0
"""A slot lock's TTL for replicas that stay alive: renewed every third of it, so a
loaded machine (a renewal late by a second) never loses a lock a live replica holds."""

DEAD_LOCK_SECONDS = 300.0
"""A slot lock's TTL where a test kills its holder: still held at the next minute's
pass; the test lets it lapse by letting that much time pass on its clock."""


def scheduler(config: Config, source: Any, port: Coordination, poster: Any, clock: Clock,
              **options: Any) -> Scheduler:
    """A scheduler on `port` posting through `poster`; `options` are `ScheduleSettings`
    fields, plus `subscriptions`, `events`, `budget` and `rng` for the scheduler."""
    options.setdefault("lock_seconds", LIVE_LOCK_SECONDS)
    options.setdefault("build_lock_seconds", 2.0)
    options.setdefault("replica", "r1")
    digests = Digests(config, source, subscriptions=options.pop("subscriptions", None))
    ports = {name: options.pop(name) for name in ("events", "budget", "rng") if name in options}
    return Scheduler(digests, port, poster, ScheduleSettings(**options), clock=clock, **ports)


class WeekOnly:
    """The counting snapshot source as a raw week source (what `CachedSource` wraps)."""

    def __init__(self, source: CountingSource) -> None:
        self.source = source

    def fetch_week(self, repo: str, week: str) -> Snapshot:
        return self.source.fetch_week(repo, week).snapshot

    def fetch_pull(self, repo: str, number: int) -> Any:
        return self.source.fetch_pull(repo, number)


THREE_PLATFORMS = [
    channel("slack", "C1", topics=("npu",)),
    channel("telegram", "-100", lang="en"),
    channel("feishu", "oc_1", topics=("npu",)),
]


def statuses(results: list[PostResult]) -> Counter[str]:
    return Counter(r.status for r in results)


async def tick_at(scheduler: Scheduler, moment: datetime) -> list[PostResult]:
    """One pass of `scheduler` at `moment`: its clock (a `HeldClock` or a virtual one)
    set there first."""
    scheduler.clock.set(moment)  # type: ignore[attr-defined]
    return await scheduler.tick()
