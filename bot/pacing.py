"""Pacing toward the chat platforms: every message a bot posts waits for its turn in the
lanes it counts against - the whole bot (its workspace, its app) and the chat it goes
to - so a thousand due channels go out at the platform's rate instead of bouncing off
it as 429s and coming back after the schedule's back-offs.

A lane is spaced, not a burst bucket: one message every `rate.interval` seconds, which
keeps within "N per period" however the platform counts it and makes the wall time of
a big run `messages / rate`. Turns are booked ahead: the widest lane (the first of a
send) is a queue in which each send books the next free moment; a narrower lane (a
chat) that is not free by then books nothing, so a chat waiting for its own turn never
holds the others up; a message that wakes well after its turn (its process stalled)
books again rather than crowding the turns after it. A platform's 429 moves every lane
of that send to after its Retry-After (`hold_off`), so every sender - every replica,
with `SharedPacer` - holds off until then.

Each adapter declares its lanes and their rates (its `[platforms.<name>]` settings);
the core never names one. `LocalPacer` keeps the lanes in this process (one replica, no
Redis); `bot.store.pacing.SharedPacer` keeps them in the coordination port (Redis),
shared by every replica.

Turns are booked at most `MAX_TURN_WAIT` ahead (the horizon: a booked turn nobody
takes is a turn lost, so none is booked an hour ahead). A message whose turn is further
away fails with `NoTurn` - unless it is sent inside `waiting_in_line(seconds)`, as the
schedule's posts are: it then takes a place in its widest lane's line (a ticket, kept
in the same store as the lanes) and waits there, asking again as the line moves, until
its turn is within the horizon, the sends that were in line before it going first.
A place not asked for within `LINE_KEEP_SECONDS` lapses, so a replica that died while
waiting holds up nobody for longer than that.
"""

from __future__ import annotations

import abc
import contextlib
import re
import secrets
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from bot.clock import SYSTEM_CLOCK, Clock
from bot.errors import ConfigError

# The periods a rate may be given per, in seconds.
RATE_UNITS: dict[str, int] = {"s": 1, "min": 60, "h": 3600}
_RATE = re.compile(r"\s*([0-9]+)\s*/\s*(s|min|h)\s*")
MAX_RATE_COUNT = 1_000_000
MAX_TURN_WAIT = 60.0
"""The horizon: how far ahead a message's turn is booked (behind a queue, or a
platform's Retry-After). A message whose turn is further away fails and the caller's
retries take over - unless it waits in line (`waiting_in_line`)."""
LATE_TOLERANCE = 0.25
"""A message that wakes this many seconds after its turn (its process stalled) books a
new turn instead of crowding the next ones, at most `MAX_LATE_TURNS` times."""
MAX_LATE_TURNS = 2
LINE_KEEP_SECONDS = 30.0
"""How long a place in line is kept unless its send asks again (it asks at least every
`LINE_POLL_SECONDS`): a replica that died while waiting loses its place this long after."""
LINE_POLL_SECONDS = 10.0
"""The longest a send waiting in line waits before asking again (keeping its place)."""
_MIN_PAUSE = 0.01
# Idle lanes a `LocalPacer` keeps before it forgets those whose turn has passed.
_LOCAL_LANES_KEPT = 1024


@dataclass(frozen=True)
class Rate:
    """`count` messages per `unit` (`s`, `min`, `h`), spaced evenly."""

    count: int
    unit: str

    @property
    def interval(self) -> float:
        """Seconds between two messages of one lane."""
        return RATE_UNITS[self.unit] / self.count

    def __str__(self) -> str:
        return f"{self.count}/{self.unit}"


def parse_rate(text: str, where: str) -> Rate:
    """`"30/s"`, `"20/min"`, `"1000/min"` as a `Rate`; a `ConfigError` naming `where`
    for anything else (no rate of zero: a platform that takes nothing is switched off,
    not paced)."""
    match = _RATE.fullmatch(text) if isinstance(text, str) else None
    if match is None or not 1 <= int(match[1]) <= MAX_RATE_COUNT:
        raise ConfigError(f"{where}: expected messages per period such as \"30/s\", "
                          f"\"20/min\" or \"1000/min\" (1-{MAX_RATE_COUNT} per s, min or h), "
                          f"got {text!r}")
    return Rate(int(match[1]), match[2])


def check_rates(settings: object, where: str, fields: Sequence[str]) -> None:
    """Each of `fields` of a platform's settings is a rate (`parse_rate`), checked at load."""
    for name in fields:
        parse_rate(getattr(settings, name), f"{where}.{name}")


@dataclass(frozen=True)
class Lane:
    """One limit a message counts against: its name (unique per platform and chat, as
    the adapter names it) and its rate."""

    name: str
    rate: Rate


def bot_and_chat_lanes(platform: str, chat_id: str, settings: object, bot_rate: str,
                       chat_rate: str) -> tuple[Lane, Lane]:
    """The lanes of one message on `platform`: its bot's (all chats; named after the
    platform) at the rate in the settings' field `bot_rate`, then its chat's at the rate
    in `chat_rate`."""
    where = f"platforms.{platform}"
    return (Lane(platform, parse_rate(getattr(settings, bot_rate), f"{where}.{bot_rate}")),
            Lane(f"{platform}:{chat_id}",
                 parse_rate(getattr(settings, chat_rate), f"{where}.{chat_rate}")))


class NoTurn(Exception):
    """A message would wait longer than it may for its turn (the platform is held off,
    or the queue is that long); nothing was booked."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the next turn is {seconds:.1f} s away")
        self.seconds = seconds


StillOurs = Callable[[], Awaitable[bool]]


@dataclass(frozen=True)
class _Line:
    seconds: float = 0.0
    still_ours: StillOurs | None = None
    in_line: Callable[[bool], None] | None = None


_NO_LINE = _Line()
_LINE: ContextVar[_Line | None] = ContextVar("prdigest_line", default=None)


class TurnWithdrawn(Exception):
    """The message's turn came, but it is no longer its sender's to send (`still_ours`
    said no: the slot's lock lapsed while it waited); nothing was sent."""


@contextlib.contextmanager
def waiting_in_line(seconds: float, *, still_ours: StillOurs | None = None,
                    in_line: Callable[[bool], None] | None = None) -> Iterator[None]:
    """Messages sent inside this block (in this task, and tasks it starts) whose turn is
    beyond the horizon wait in line for it, up to `seconds` in all, rather than fail
    with `NoTurn`: a weekly post may wait its turn, a chat's answer may not. When its
    turn comes, each message asks `still_ours` whether it may still go (`TurnWithdrawn`
    when not): what waited long may have changed hands meanwhile. `in_line` is told
    True when a message starts waiting for its turn and False when the wait is over
    (nothing goes to the platform in between). The adapters' send paths need not know:
    the pacer reads it."""
    token = _LINE.set(_Line(max(0.0, seconds), still_ours, in_line))
    try:
        yield
    finally:
        _LINE.reset(token)


def line_seconds() -> float:
    """How long a message sent here may wait in line (0 outside `waiting_in_line`)."""
    return (_LINE.get() or _NO_LINE).seconds


class Pacer(Protocol):
    """What an adapter asks before each message, and tells after a 429."""

    async def take_turn(self, lanes: Sequence[Lane], *, max_wait: float) -> None:
        """Wait until the message may go through `lanes` (the widest first), its turn
        booked in each; `NoTurn` when that is more than `max_wait` seconds away - or,
        inside `waiting_in_line(seconds)`, when even waiting in line would take longer
        than `seconds`."""
        ...

    async def hold_off(self, lanes: Sequence[Lane], seconds: float) -> None:
        """The platform said to wait `seconds` (a 429's Retry-After): no turn in these
        lanes before then, for any sender."""
        ...


@dataclass(frozen=True)
class Booking:
    """What a booking attempt found: `granted` (a turn is booked, `wait` seconds from
    now), or not (ask again in `wait` seconds: a narrower lane is busy until then, or
    the turn is further away than the caller may book - then `wait` is when it would
    come). `ahead`: the sends in line before it."""

    granted: bool
    wait: float
    ahead: int = 0


class BookingPacer(abc.ABC):
    """A `Pacer` over one booking step (in this process, or one Redis script); its
    waits pass on `clock`."""

    clock: Clock = SYSTEM_CLOCK

    @abc.abstractmethod
    async def book(self, lanes: Sequence[Lane], *, within: float,
                   ticket: str | None = None) -> Booking:
        """Book the next turn in `lanes` if it is at most `within` seconds away once the
        sends in line before it went first (the whole line when `ticket` is None); a
        `ticket` not booked takes or keeps its place in line (`LINE_KEEP_SECONDS`),
        booked it leaves it."""

    @abc.abstractmethod
    async def leave_line(self, lanes: Sequence[Lane], ticket: str) -> None:
        """Give up `ticket`'s place in the line of `lanes`."""

    @abc.abstractmethod
    async def hold_off(self, lanes: Sequence[Lane], seconds: float) -> None: ...

    async def take_turn(self, lanes: Sequence[Lane], *, max_wait: float) -> None:
        if not lanes:
            return
        line = _LINE.get() or _NO_LINE
        patience = max(max_wait, line.seconds)
        if patience <= max_wait:
            await self._take_turn(lanes, max_wait, patience, None)
        else:
            ticket = secrets.token_hex(8)
            if line.in_line is not None:
                line.in_line(True)
            try:
                await self._take_turn(lanes, max_wait, patience, ticket)
            except BaseException:
                # Given up or cancelled while in line: its place goes to the next (it
                # would lapse on its own anyway).
                with contextlib.suppress(Exception):
                    await self.leave_line(lanes, ticket)
                raise
            finally:
                if line.in_line is not None:
                    line.in_line(False)
        if line.still_ours is not None and not await line.still_ours():
            raise TurnWithdrawn("what this message belongs to changed hands while it "
                                "waited for its turn; not sent")

    async def _take_turn(self, lanes: Sequence[Lane], max_wait: float, patience: float,
                         ticket: str | None) -> None:
        clock = self.clock
        started = clock.monotonic()
        late_turns = 0
        while True:
            left = patience - (clock.monotonic() - started)
            within = max(0.0, min(max_wait, left))
            booking = await self.book(lanes, within=within, ticket=ticket)
            if booking.wait > left:
                raise NoTurn(booking.wait)
            if not booking.granted:
                # A narrower lane is busy until then; or, in line, the turn is beyond
                # the horizon: ask again when it may have come within it, and often
                # enough to keep the place.
                pause = booking.wait if booking.wait <= within else min(
                    booking.wait - within, LINE_POLL_SECONDS)
                await clock.sleep(max(pause, _MIN_PAUSE))
                continue
            due = clock.monotonic() + booking.wait
            if booking.wait > 0:
                await clock.sleep(booking.wait)
            if clock.monotonic() - due <= LATE_TOLERANCE or late_turns == MAX_LATE_TURNS:
                return
            # The process stalled past the turn (CPU starved, a long pause): going now
            # would crowd the turns booked after it, so book again at the queue's end.
            late_turns += 1


class LocalPacer(BookingPacer):
    """The lanes of this process: the pacing of a single replica without Redis, and
    what `SharedPacer` falls back to while Redis is away."""

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self.clock = clock
        self._free: dict[str, float] = {}  # lane name -> when its next turn is
        # widest lane name -> ticket -> (when it took its place, when that lapses)
        self._lines: dict[str, dict[str, tuple[float, float]]] = {}

    def _line(self, widest: str, now: float) -> dict[str, tuple[float, float]]:
        line = {ticket: held for ticket, held in self._lines.get(widest, {}).items()
                if held[1] > now}
        if line:
            self._lines[widest] = line
        else:
            self._lines.pop(widest, None)
        return line

    async def book(self, lanes: Sequence[Lane], *, within: float,
                   ticket: str | None = None) -> Booking:
        now = self.clock.monotonic()
        widest = lanes[0].name
        line = self._line(widest, now)
        order = sorted(line, key=lambda held: (line[held][0], held))
        ahead = order.index(ticket) if ticket in line else len(order)
        start = max(now, self._free.get(widest, now))
        booking: Booking | None = None
        for lane in lanes[1:]:
            free = self._free.get(lane.name, now)
            if free > start:
                booking = Booking(False, free - now, ahead)
                break
        if booking is None and start + ahead * lanes[0].rate.interval - now > within:
            booking = Booking(False, start + ahead * lanes[0].rate.interval - now, ahead)
        if booking is not None:
            if ticket is not None:
                joined = line[ticket][0] if ticket in line else max(
                    [now, *(held[0] + 1e-6 for held in line.values())])
                self._lines.setdefault(widest, {})[ticket] = (joined, now + LINE_KEEP_SECONDS)
            return booking
        for lane in lanes:
            self._free[lane.name] = start + lane.rate.interval
        if ticket is not None:
            self._lines.get(widest, {}).pop(ticket, None)
        self._forget_idle(now)
        return Booking(True, start - now, ahead)

    async def leave_line(self, lanes: Sequence[Lane], ticket: str) -> None:
        self._lines.get(lanes[0].name, {}).pop(ticket, None)

    async def hold_off(self, lanes: Sequence[Lane], seconds: float) -> None:
        until = self.clock.monotonic() + max(0.0, seconds)
        for lane in lanes:
            self._free[lane.name] = max(self._free.get(lane.name, until), until)

    def __len__(self) -> int:
        """How many lanes it remembers (those idle long enough are forgotten)."""
        return len(self._free)

    def _forget_idle(self, now: float) -> None:
        if len(self._free) > _LOCAL_LANES_KEPT:
            self._free = {name: at for name, at in self._free.items() if at > now}
        if len(self._lines) > _LOCAL_LANES_KEPT:
            for widest in list(self._lines):
                self._line(widest, now)
