"""The weekly posts: each channel's cron in its own time zone, once per week and channel.

When a channel's cron fires, the previous ISO week (in the channel's time zone) is
due for it. A run is due while its fire time is no older than the catch-up window
(`server.catch_up_hours`), so a replica that starts after an outage posts what it
missed, and nothing older. Every replica computes the same due list; the ledger
(`bot.store.ledger`) makes sure each slot goes out once:

- a slot already `posted` (or `held`) is skipped after one pipelined read of the
  whole tick's entries;
- otherwise a replica takes the slot's lock, re-reads the entry, builds the digest,
  writes the intent fenced by the lock, posts, and records the platform's
  confirmation as the very next step. A graceful stop (task cancelled) lets a post in
  flight finish and be recorded, so it leaves nothing in doubt.

A replica killed hard between the platform's answer and the ledger write leaves an
entry `sending` whose outcome is unknown. The next lock holder then:
- asks the platform when it can tell (`complete_delivery`): Slack messages carry the
  delivery key in their metadata, so the parts found in the channel are recorded and
  only missing ones posted: exactly once (given the `channels:history` scope);
- re-sends with the same delivery key when the platform deduplicates by that key and
  the first send is recent enough (Feishu's message `uuid`, one hour): exactly once;
- otherwise re-sends (`in_doubt="resend"`, the default: the team may get the digest
  twice, never zero times) or holds the slot for an operator (`in_doubt="hold"`: never
  twice, possibly zero; `prdigest post --force` sends it).
A send recorded `failed` (timed out after the platform took it, refused part-way) is
looked for the same way before its retry. Telegram has neither an idempotency key nor a
readable history: there one HTTP response plus one Redis write is what no client closes.

A post whose turn on the platform is beyond the pacing horizon (a workspace of
thousands of channels due in one minute) waits in line for it (`bot.pacing`), up to
`line_seconds`, its slot's lock kept alive; when its turn comes the lock is renewed
once more before the message goes, so a post whose slot changed hands meanwhile is not
sent. A graceful stop cancels a post still in line at once: nothing went out, and its
ledger entry is put back to an attempt not made, so nothing is left in doubt.

Digests are built once per (repository, week, language, focus topics) across all
replicas (a Redis mutex and a shared copy), and a week is fetched once per
(repository, week): the fetch runs under a mutex and, through the cached source, the
replicas that wait read the cached copy instead of asking GitHub again.

Time comes from one `Clock` (`bot.clock`): which runs are due, back-offs, the waits
for a lock or for Redis; tests give it a virtual one. Lock expiry is the store's own
time (Redis's, or the in-memory store's clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import msgspec

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ChannelConfig, Config, ConfigView
from bot.delivery.due import DueFailure, DueRun, due_runs
from bot.delivery.periodic import log_failed_pass
from bot.delivery.poster import Poster
from bot.delivery.prefetch import Prefetcher
from bot.delivery.results import PostResult, PostStatus, ScheduleStats
from bot.delivery.shared_digests import SharedDigests
from bot.digests import Digests
from bot.errors import DeliveryInDoubt, SourceError, WeekError
from bot.events import DigestPosted, Events, ScheduleFailed
from bot.github.budget import Budget
from bot.logs import delivery
from bot.models import Digest
from bot.pacing import waiting_in_line
from bot.source import Source
from bot.store.coordination import Coordination, StoreUnavailable
from bot.store.ledger import (
    POST_LOCK_SECONDS,
    Ledger,
    LedgerEntry,
    Slot,
    backoff,
    next_delivery_key,
)
from bot.store.locks import Lock

log = logging.getLogger(__name__)

# A re-send counts as deduplicated only well inside the platform's window.
DEDUPE_MARGIN = timedelta(minutes=5)

InDoubt = Literal["resend", "hold"]

POST_LINE_SECONDS = 3 * 3600.0
"""How long a post may wait in line for its turn on the platform (`bot.pacing`: turns
beyond the horizon are waited for in line, not failed): 16,667 Slack channels at
300/min go out in 56 minutes. A turn further away than this fails into the back-off."""


class _LineGate:
    """What a post's messages ask when their turn comes (`still_ours`): whether the
    slot's lock is still this replica's, asked of the store (renewing it) - a post that
    waited in line past a stall of its process may have lost its slot to another
    replica, which then posts it; with Redis away it is not known lost. `reached`: a
    message's turn came, so something may be on its way to the platform; `waiting`: a
    message waits in line for its turn now."""

    def __init__(self, lock: Lock) -> None:
        self.lock = lock
        self.reached = False
        self.waiting = False

    def in_line(self, waiting: bool) -> None:
        self.waiting = waiting

    @property
    def nothing_sent(self) -> bool:
        """The post waits in line and no message of it reached its turn: stopping it
        now sends nothing."""
        return self.waiting and not self.reached

    async def still_ours(self) -> bool:
        self.reached = True
        try:
            return await self.lock.renew()
        except StoreUnavailable:
            return not self.lock.lost


def default_replica_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{random.randrange(16**4):04x}"


@dataclass(frozen=True)
class ScheduleSettings:
    """How one replica runs the schedule.

    `replica` names it in the ledger and logs (default: host, process and a random
    tag); `lock_seconds` is how long a dead replica's slot stays locked (renewed while
    alive, so a slow post keeps it), `build_lock_seconds` the same for a week's fetch
    and a digest's build; `poll_seconds` the longest pause between passes;
    `concurrency` bounds posts in flight; `in_doubt` is the policy for a send whose
    outcome is unknown (module docstring); `previous_week` fetches the week before for
    the trends; `share_digests` keeps built digests in the store for the other replicas
    (off for digests built from a local snapshot file); `record_wait_seconds` is how
    long a confirmed post waits for the store to come back to be recorded;
    `line_seconds` how long a post may wait in line for its turn on the platform (its
    slot's lock kept alive meanwhile) before it fails into the back-off."""

    replica: str | None = None
    lock_seconds: float = POST_LOCK_SECONDS
    build_lock_seconds: float = 30.0
    poll_seconds: float = 60.0
    concurrency: int = 16
    in_doubt: InDoubt = "resend"
    previous_week: bool = True
    share_digests: bool = True
    record_wait_seconds: float = 600.0
    line_seconds: float = POST_LINE_SECONDS


class Scheduler:
    """Posts each channel's weekly digest once, however many replicas run it.

    `tick()` is one pass; `run_forever(stop_event)` ticks just after every minute
    boundary (cron's resolution) until the event is set. `post()` is the on-demand
    path of `prdigest post`, through the same lock and ledger. `digests` is the
    process's one (its config, source and subscriptions), the one chat answers from.

    `schedule` holds how this replica runs it (`ScheduleSettings`); `clock` tells what
    is due and paces the waits (tests move it); `budget` (GitHub's points) paces the
    weekly fetches, which `server.prefetch_hours` spreads over the hours before each
    posting minute (`bot.delivery.prefetch`); each post attempt (`DigestPosted`) and
    failed pass (`ScheduleFailed`) is told to `events`; `rng` spreads the passes.
    """

    def __init__(
        self,
        digests: Digests,
        port: Coordination,
        poster: Poster,
        schedule: ScheduleSettings | None = None,
        *,
        clock: Clock = SYSTEM_CLOCK,
        events: Events | None = None,
        budget: Budget | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if digests.source is None:
            raise ValueError("the schedule reads its weeks from a source of PR data")
        config = digests.config
        self.settings: ConfigView = digests.settings
        self.source: Source = digests.source
        self.port = port
        self.poster = poster
        self.schedule = schedule or ScheduleSettings()
        self.clock = clock
        self.replica = self.schedule.replica or default_replica_name()
        self.rng = rng or random.Random()
        self.ledger = Ledger(port, clock=clock)
        self.digests = digests
        self.catch_up = timedelta(hours=config.server.catch_up_hours)
        self.stats = ScheduleStats()
        self.events = events or Events()
        self.shared = SharedDigests(self.digests, self.source, port, self.stats,
                                    lock_seconds=self.schedule.build_lock_seconds,
                                    share=self.schedule.share_digests,
                                    trends=self.schedule.previous_week, budget=budget,
                                    clock=clock)
        self.prefetcher = Prefetcher(digests.settings, self.shared, budget=budget,
                                     trends=self.schedule.previous_week,
                                     window=timedelta(hours=config.server.prefetch_hours))
        self._stopping = asyncio.Event()

    @property
    def config(self) -> Config:
        """The config in force: its channels are the ones posted to (a reload or a
        chat's settings change them between passes)."""
        return self.settings.current

    @config.setter
    def config(self, value: Config) -> None:
        self.settings = value

    # --- the loop -------------------------------------------------------------------

    async def run_forever(self, stop_event: asyncio.Event) -> None:
        """Tick at start-up (catching up what was missed), then after each minute."""
        log.info("schedule: replica %s started, %d channel(s)", self.replica,
                 len(self.config.channels))
        self._stopping = stop_event
        while not stop_event.is_set():
            try:
                await self.tick()
            except Exception as exc:  # Redis down, a bug: log it and try again next minute
                log_failed_pass(log, "schedule: pass failed", exc)
                self.stats.pass_done(f"{type(exc).__name__}: {exc}", self.clock.now())
                self.events.emit(ScheduleFailed("pass"))
            now = self.clock.now()
            to_next_minute = 60.0 - (now.second + now.microsecond / 1e6)
            delay = min(self.schedule.poll_seconds, to_next_minute + self.rng.uniform(0.05, 1.0))
            await self.clock.wait(stop_event, delay)
        await self.prefetcher.stop()

    async def tick(self) -> list[PostResult]:
        """One pass: post every due slot that the ledger does not hold yet."""
        now = self.clock.now()
        started = self.clock.monotonic()
        self.prefetcher.start(now)
        failures: list[DueFailure] = []
        due = due_runs(self.config.channels, now, self.catch_up, failures=failures)
        for _ in failures:
            self.events.emit(ScheduleFailed("channel"))
        results: list[PostResult] = []
        todo: list[DueRun] = []
        for run, entry in zip(due, await self.ledger.get_many([r.slot for r in due]),
                              strict=True):
            skip = self._skip(run.slot, entry, now)
            if skip is None:
                todo.append(run)
            else:
                results.append(skip)
        # Replicas walk the slots in different orders, so they rarely meet on a lock.
        self.rng.shuffle(todo)
        gate = asyncio.Semaphore(max(1, self.schedule.concurrency))

        async def deliver(run: DueRun) -> PostResult:
            async with gate:
                if self._stopping.is_set():  # shutting down: leave it to the others
                    return self._result(run.slot, "waiting", detail="shutting down")
                return await self._deliver(run.channel, run.week, now)

        try:
            results += await asyncio.gather(*(deliver(run) for run in todo))
        finally:
            self.shared.end_pass()
            self.stats.ticks += 1
            self.stats.last_tick_at = now
            self.stats.last_tick_seconds = self.clock.monotonic() - started
        self.stats.pass_done(f"{len(failures)} channel(s) left out; {failures[0].channel.key}: "
                             f"{failures[0].error}" if failures else None, now)
        return results

    async def post(
        self, channel: ChannelConfig, week: str, *, force: bool = False,
        wait_seconds: float | None = None,
    ) -> PostResult:
        """Post `week` to `channel` now (the CLI), through the same lock and ledger.

        A slot already posted (or held) is left alone unless `force`, which sends again
        under a new delivery key; an earlier failure's back-off does not apply.
        """
        wait = self.schedule.lock_seconds * 2 if wait_seconds is None else wait_seconds
        return await self._deliver(channel, week, self.clock.now(), force=force,
                                   wait_seconds=wait, manual=True)

    def status(self) -> dict[str, object]:
        """For /healthz: who this replica is and what it did; no secrets."""
        stats = self.stats
        return {
            "replica": self.replica,
            "channels": len(self.config.channels),
            "catch_up_hours": self.config.server.catch_up_hours,
            "ticks": stats.ticks,
            "last_tick_at": stats.last_tick_at.isoformat() if stats.last_tick_at else None,
            "posted": stats.posted,
            "failed": stats.failed,
            "held": stats.held,
            "resent_in_doubt": stats.resent_in_doubt,
            "duplicates_seen": stats.duplicates_seen,
            "digest_builds": stats.digest_builds,
            "failed_passes": stats.failed_passes,
            "last_pass_ok": stats.last_pass_ok,
            "last_error": stats.last_error,
            "last_error_at": stats.last_error_at.isoformat() if stats.last_error_at else None,
        }

    # --- one slot -------------------------------------------------------------------

    def _result(self, slot: Slot, status: PostStatus, **fields: object) -> PostResult:
        return PostResult(channel=slot.channel, repo=slot.repo, week=slot.week,
                          status=status, replica=self.replica, **fields)  # type: ignore[arg-type]

    def _done(self, slot: Slot, entry: LedgerEntry) -> PostResult:
        if entry.state == "posted":
            return self._result(slot, "already-posted", message_ids=entry.message_ids,
                                detail=f"posted by {entry.replica}")
        return self._result(slot, "held", detail=entry.error or "held for an operator")

    def _skip(self, slot: Slot, entry: LedgerEntry | None, now: datetime) -> PostResult | None:
        """The result for a slot that needs no lock this pass, or None to try it."""
        if entry is None:
            return None
        if entry.state in ("posted", "held"):
            return self._done(slot, entry)
        if entry.retry_at is not None and now < entry.retry_at:
            return self._result(slot, "waiting", detail=entry.error or "")
        return None

    async def _deliver(
        self, channel: ChannelConfig, week: str, now: datetime, *, force: bool = False,
        wait_seconds: float = 0.0, manual: bool = False,
    ) -> PostResult:
        slot = Slot(week, channel.key, channel.scope)
        lock = self.ledger.lock(slot, self.schedule.lock_seconds)
        acquired = (await lock.acquire_waiting(wait_seconds) if wait_seconds > 0
                    else await lock.acquire())
        if not acquired:
            return self._result(slot, "busy", detail="another replica holds this slot")
        try:
            async with lock.kept_alive():
                with delivery(slot.name):  # its lines say which post they belong to
                    return await self._deliver_locked(channel, slot, lock, now,
                                                      force=force, manual=manual)
        finally:
            await lock.release()

    async def _deliver_locked(
        self, channel: ChannelConfig, slot: Slot, lock: Lock, now: datetime, *,
        force: bool, manual: bool,
    ) -> PostResult:
        raw, entry = await self.ledger.read(slot)
        if not force and entry is not None:
            # Another replica may have finished between that read and the lock.
            skip = self._done(slot, entry) if entry.state in ("posted", "held") else (
                None if manual else self._skip(slot, entry, now))
            if skip is not None:
                return skip
        in_doubt = not force and entry is not None and entry.state == "sending"
        if not force and entry is not None and entry.may_have_arrived:
            found = await self._found_delivered(channel, slot, entry, lock)
            if found is not None:
                return await self._record_found(slot, entry, found)
            if in_doubt and not self._may_resend(channel, entry, now):
                return await self._hold(slot, lock, raw, entry, now)
        try:
            digest = await self.shared.for_channel(channel, slot.week, rebuild=force)
        except (SourceError, WeekError) as exc:
            return await self._fail(slot, lock, raw, entry, now, f"no data: {exc}",
                                    counts_attempt=False)
        intent = self._intent(slot, entry, now, force=force, in_doubt=in_doubt)
        written, intent_raw = await self.ledger.write_fenced(slot, lock, raw, intent)
        if not written:
            return self._result(slot, "busy", detail="the slot changed hands before posting")
        if in_doubt:
            log.warning("schedule: %s was left in doubt by %s; sending again with key %s",
                        slot.name, entry.replica if entry else "?", intent.delivery_key)
        return await self._send_and_record(channel, slot, lock, digest, intent, intent_raw,
                                           in_doubt=in_doubt, force=force)

    async def _found_delivered(self, channel: ChannelConfig, slot: Slot, entry: LedgerEntry,
                               lock: Lock) -> list[str] | None:
        """Whether a delivery in doubt arrived after all, asked of the platform when the
        poster can tell (`complete_delivery`: Slack finds its parts by their metadata,
        and posts any part missing); its message ids, or None when it cannot tell or
        nothing arrived."""
        since = entry.first_attempt_at or entry.last_attempt_at
        if since is None:
            return None
        try:
            digest = await self.shared.for_channel(channel, slot.week)
            # It may post the parts missing, each in its turn, while the lock is ours.
            gate = _LineGate(lock)
            with waiting_in_line(self.schedule.line_seconds, still_ours=gate.still_ours,
                                 in_line=gate.in_line):
                found = await self.poster.complete_delivery(
                    channel, digest, delivery_key=entry.delivery_key, since=since)
        except Exception as exc:  # the policy for unknown outcomes decides instead
            log.warning("schedule: could not check whether %s arrived: %s", slot.name, exc)
            return None
        return None if found is None else [str(i) for i in found]

    async def _record_found(self, slot: Slot, entry: LedgerEntry, found: list[str]
                            ) -> PostResult:
        posted = msgspec.structs.replace(
            entry, state="posted", posted_at=self.clock.now(), message_ids=tuple(found),
            error=None, failures=0, replica=self.replica)
        await self._record_posted(slot, posted)
        self.stats.posted += 1
        log.warning("schedule: %s was left in doubt by %s but had arrived; recorded, not "
                    "sent again", slot.name, entry.replica)
        return self._result(slot, "posted", message_ids=posted.message_ids, in_doubt=True,
                            detail="found on the platform; not sent again")

    def _may_resend(self, channel: ChannelConfig, entry: LedgerEntry, now: datetime) -> bool:
        """Whether to send again a delivery whose outcome is unknown."""
        window = self.poster.idempotency_window(channel)
        started = entry.first_attempt_at or entry.last_attempt_at
        if window is not None and started is not None and now - started < window - DEDUPE_MARGIN:
            return True  # the platform drops the copy if the first one arrived
        return self.schedule.in_doubt == "resend"

    def _intent(self, slot: Slot, entry: LedgerEntry | None, now: datetime, *,
                force: bool, in_doubt: bool) -> LedgerEntry:
        key = next_delivery_key(slot, entry, force=force)
        if entry is None:
            return LedgerEntry(state="sending", week=slot.week, channel=slot.channel,
                               repo=slot.repo, delivery_key=key,
                               attempts=1, first_attempt_at=now, last_attempt_at=now,
                               replica=self.replica, forced=force)
        if force:
            return msgspec.structs.replace(
                entry, state="sending", delivery_key=key, generation=entry.generation + 1,
                attempts=entry.attempts + 1, failures=0, first_attempt_at=now,
                last_attempt_at=now, retry_at=None, posted_at=None, message_ids=(),
                replica=self.replica, error=None, forced=True)
        # A retry keeps its key and first-attempt time: a platform that deduplicates by
        # key recognises it.
        return msgspec.structs.replace(
            entry, state="sending", attempts=entry.attempts + 1,
            first_attempt_at=entry.first_attempt_at or now, last_attempt_at=now,
            retry_at=None, replica=self.replica,
            resent_in_doubt=entry.resent_in_doubt + (1 if in_doubt else 0))

    async def _send_and_record(
        self, channel: ChannelConfig, slot: Slot, lock: Lock, digest: Digest,
        intent: LedgerEntry, intent_raw: bytes, *, in_doubt: bool, force: bool,
    ) -> PostResult:
        """Post and record, shielded: a cancelled replica (a graceful stop) lets the post
        in flight finish and be written to the ledger before it stops - unless the post
        is still waiting in line, with nothing sent: it then gives its place up and the
        ledger says so, for the replica that posts it instead."""
        gate = _LineGate(lock)
        work = asyncio.ensure_future(self._post_and_record(
            channel, slot, lock, digest, intent, intent_raw, gate, in_doubt=in_doubt,
            force=force))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            if gate.nothing_sent and not work.done():
                work.cancel()
                await asyncio.wait([work], timeout=self.schedule.lock_seconds)
                if work.cancelled():
                    await self._withdrawn(slot, lock, intent_raw, intent)
                raise
            await asyncio.wait([work], timeout=self.schedule.lock_seconds)
            raise

    async def _withdrawn(self, slot: Slot, lock: Lock, intent_raw: bytes,
                         intent: LedgerEntry) -> None:
        """A post given up in line before any message went: the attempt did not happen,
        so the entry does not say `sending` (nothing is in doubt because of it)."""
        undone = msgspec.structs.replace(
            intent, state="failed", attempts=intent.attempts - 1,
            error="stopped while waiting in line for a turn; nothing was sent")
        with contextlib.suppress(Exception):
            await self.ledger.write_fenced(slot, lock, intent_raw, undone)
        log.info("schedule: %s gave up its place in line (stopping); nothing was sent",
                 slot.name)

    async def _post_and_record(
        self, channel: ChannelConfig, slot: Slot, lock: Lock, digest: Digest,
        intent: LedgerEntry, intent_raw: bytes, gate: _LineGate, *, in_doubt: bool,
        force: bool,
    ) -> PostResult:
        try:
            # Its turn on the platform may be far off (a workspace of thousands of
            # channels): it waits in line, the slot's lock kept alive, rather than fail;
            # each message goes only if the lock is still this replica's then.
            with waiting_in_line(self.schedule.line_seconds, still_ours=gate.still_ours,
                                 in_line=gate.in_line):
                ids = await self.poster.post_digest(channel, digest,
                                                    delivery_key=intent.delivery_key)
        except Exception as exc:
            self.events.emit(DigestPosted(channel.platform, ok=False))
            reason = str(exc) or type(exc).__name__
            if isinstance(exc, DeliveryInDoubt) and not exc.resend:
                # It may be on the platform: held, never sent twice (the platform's policy).
                return await self._hold(slot, lock, intent_raw, intent, self.clock.now(),
                                        reason=f"{reason}; held, as the platform's in_doubt "
                                               "says (prdigest post --force sends it)")
            log.warning("schedule: posting %s failed: %s", slot.name, reason)
            return await self._fail(slot, lock, intent_raw, intent, intent.last_attempt_at,
                                    reason, counts_attempt=True)
        # The ledger write follows the platform's confirmation with nothing in between.
        self.events.emit(DigestPosted(channel.platform, ok=True))
        posted = msgspec.structs.replace(
            intent, state="posted", posted_at=self.clock.now(), message_ids=tuple(ids),
            error=None, failures=0)
        previous = await self._record_posted(slot, posted)
        # `previous == posted`: this very record, written by a try whose answer a
        # failover lost - not a second post.
        if previous is not None and previous.state == "posted" and previous != posted \
                and not force:
            self.stats.duplicates_seen += 1
            log.error("schedule: %s was posted twice (also by %s)", slot.name,
                      previous.replica)
        self.stats.posted += 1
        if in_doubt:
            self.stats.resent_in_doubt += 1
        log.info("schedule: posted %s (%d message(s))", slot.name, len(ids))
        return self._result(slot, "posted", message_ids=posted.message_ids, in_doubt=in_doubt)

    async def _record_posted(self, slot: Slot, posted: LedgerEntry) -> LedgerEntry | None:
        """Write a confirmed post to the ledger, waiting for Redis while it is away
        (up to `record_wait_seconds`): the message is out, and a ledger left saying
        `sending` would have the next pass send it again."""
        deadline = self.clock.monotonic() + self.schedule.record_wait_seconds
        delay = 0.1
        while True:
            try:
                return await self.ledger.record_posted(slot, posted)
            except StoreUnavailable as exc:
                if self.clock.monotonic() + delay > deadline:
                    log.error("schedule: %s was posted but could not be recorded: %s",
                              slot.name, exc)
                    raise
                if delay == 0.1:
                    log.warning("schedule: %s was posted; recording it waits for Redis (%s)",
                                slot.name, exc.reason)
                await self.clock.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def _fail(
        self, slot: Slot, lock: Lock, raw: bytes | None, entry: LedgerEntry | None,
        now: datetime | None, reason: str, *, counts_attempt: bool,
    ) -> PostResult:
        """Record a failure with its back-off; the slot is tried again while still due."""
        at = now or self.clock.now()
        base = entry or LedgerEntry(state="failed", week=slot.week, channel=slot.channel,
                                    repo=slot.repo, delivery_key=slot.delivery_key(0))
        failures = base.failures + 1
        failed = msgspec.structs.replace(
            base, state="failed", failures=failures, retry_at=at + backoff(failures),
            error=reason[:300], replica=self.replica)
        if not counts_attempt and base.state == "sending":
            # Still in doubt from an earlier send: keep saying so.
            failed = msgspec.structs.replace(failed, state="sending")
        with contextlib.suppress(Exception):
            await self.ledger.write_fenced(slot, lock, raw, failed)
        self.stats.failed += 1
        return self._result(slot, "failed", detail=reason)

    async def _hold(self, slot: Slot, lock: Lock, raw: bytes | None,
                    entry: LedgerEntry, now: datetime, *, reason: str | None = None
                    ) -> PostResult:
        reason = reason or (f"a send by {entry.replica} at {entry.last_attempt_at} may or "
                            "may not have arrived; held (prdigest post --force sends it)")
        held = msgspec.structs.replace(entry, state="held", error=reason)
        await self.ledger.write_fenced(slot, lock, raw, held)
        self.stats.held += 1
        log.warning("schedule: %s %s", slot.name, reason)
        return self._result(slot, "held", detail=reason)

    # --- digests --------------------------------------------------------------------
