"""The shared send loop on a virtual clock, with a scripted platform: a 429 holds every
sender out of the lanes and the send goes again after it, a 5xx backs off doubling
without holding anyone, tries run out, a hold or a turn too far away is not waited
for, an answer lost is never sent again and marks its part in doubt, and a post left
in doubt is finished from the parts found."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from adapters.sending import (
    AnswerLost,
    BackOff,
    HoldOff,
    Limits,
    Outcome,
    Refused,
    Stopped,
    TryAgain,
    header_seconds,
    refused,
    resume_parts,
    send_in_turn,
    send_parts,
)
from bot.pacing import Lane, LocalPacer, NoTurn, Rate
from testkit.clock import VirtualClock

BOT = Lane("bot", Rate(1000, "s"))
CHAT = [BOT, Lane("bot:chat", Rate(1000, "s"))]
OTHER_CHAT = [BOT, Lane("bot:other", Rate(1000, "s"))]


class Refusal(Exception):
    """What the scripted platform raises; `outcome` names what its mapping makes of it."""

    def __init__(self, outcome: Callable[[Exception], Outcome]) -> None:
        super().__init__("refused")
        self.outcome = outcome


class Mapped(Exception):
    """The error the mapping says a refusal becomes."""


class Lost(AnswerLost):
    """A request that went out and whose answer never came."""


def mapping(error: Exception) -> Outcome:
    return error.outcome(error) if isinstance(error, Refusal) else refused(error)


class Platform:
    """Answers each call with the next of `script` (an exception, or the id sent) and
    notes when each call came, on `clock`."""

    def __init__(self, clock: VirtualClock, script: list[Exception | str]) -> None:
        self.clock = clock
        self.script: Iterator[Exception | str] = iter(script)
        self.calls: list[float] = []

    async def call(self) -> str:
        self.calls.append(self.clock.monotonic())
        answer = next(self.script)
        if isinstance(answer, Exception):
            raise answer
        return answer


def hold(seconds: float) -> Refusal:
    return Refusal(lambda _: HoldOff(Mapped("429"), seconds=seconds))


def server_error() -> Refusal:
    return Refusal(lambda _: BackOff(Mapped("503")))


def late(no_turn: NoTurn) -> Exception:
    return Mapped(f"late by {no_turn.seconds:.0f} s")


async def send(platform: Platform, pacer: LocalPacer, limits: Limits,
               lanes: list[Lane] = CHAT) -> str:
    return await send_in_turn(platform.call, mapping, pacer=pacer, lanes=lanes,
                              limits=limits, late=late, clock=platform.clock)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


async def test_a_429_holds_every_sender_of_its_lanes_off_and_the_send_goes_after_it(
        clock: VirtualClock) -> None:
    pacer = LocalPacer(clock)
    platform = Platform(clock, [hold(30), "ts-1"])
    start = clock.monotonic()

    sending = asyncio.create_task(send(platform, pacer, Limits(attempts=3, max_wait=60)))
    while not platform.calls or not clock.slept:
        await asyncio.sleep(0)
    # Held off: the bot lane too, so another chat's message waits for it.
    with pytest.raises(NoTurn):
        await pacer.take_turn(OTHER_CHAT, max_wait=10)
    assert await sending == "ts-1"

    assert platform.calls[1] - start >= 30  # not before the Retry-After
    assert platform.calls[1] - start < 31


async def test_without_lanes_a_hold_is_waited_out_on_the_clock(clock: VirtualClock) -> None:
    platform = Platform(clock, [hold(7), "ok"])
    assert await send(platform, LocalPacer(clock), Limits(attempts=2, max_wait=60),
                      lanes=[]) == "ok"
    assert clock.slept == [pytest.approx(7.1)]


async def test_a_5xx_backs_off_doubling_and_holds_no_other_sender(
        clock: VirtualClock) -> None:
    pacer = LocalPacer(clock)
    platform = Platform(clock, [server_error(), server_error(), server_error(), "id-4"])
    limits = Limits(attempts=4, max_wait=60, backoff=0.5)

    assert await send(platform, pacer, limits, lanes=[]) == "id-4"

    assert clock.slept == [0.5, 1.0, 2.0]
    # A back-off is the sender's own wait: the lanes stay free for the others.
    sending = asyncio.create_task(send(Platform(clock, [server_error(), "x"]), pacer,
                                       Limits(attempts=2, max_wait=60, backoff=5)))
    while 5 not in clock.slept:
        await asyncio.sleep(0)
    before = clock.monotonic()
    await pacer.take_turn(OTHER_CHAT, max_wait=0.01)
    assert clock.monotonic() - before < 0.01
    assert not sending.done()
    assert await sending == "x"


async def test_tries_run_out_and_the_mapped_error_is_raised(clock: VirtualClock) -> None:
    platform = Platform(clock, [hold(1), hold(1), hold(1), "never"])
    with pytest.raises(Mapped, match="429"):
        await send(platform, LocalPacer(clock), Limits(attempts=3, max_wait=60))
    assert len(platform.calls) == 3


async def test_a_refusal_is_raised_at_once_and_an_unmapped_error_as_it_is(
        clock: VirtualClock) -> None:
    platform = Platform(clock, [Refusal(lambda _: Refused(Mapped("no"))), "never"])
    with pytest.raises(Mapped, match="no"):
        await send(platform, LocalPacer(clock), Limits(attempts=5, max_wait=60))
    assert len(platform.calls) == 1

    own = KeyError("own")
    with pytest.raises(KeyError) as raised:
        await send(Platform(clock, [own]), LocalPacer(clock), Limits(attempts=5, max_wait=60))
    assert raised.value is own


async def test_a_renewed_token_is_tried_again_without_waiting(clock: VirtualClock) -> None:
    platform = Platform(clock, [Refusal(lambda _: TryAgain(Mapped("token"))), "ok"])
    assert await send(platform, LocalPacer(clock), Limits(attempts=2, max_wait=60),
                      lanes=[]) == "ok"
    assert clock.slept == []


async def test_a_hold_longer_than_the_longest_hold_is_not_waited_but_still_held(
        clock: VirtualClock) -> None:
    pacer = LocalPacer(clock)
    platform = Platform(clock, [hold(100), "never"])
    with pytest.raises(Mapped, match="429"):
        await send(platform, pacer, Limits(attempts=3, max_wait=60, longest_hold=60))
    assert len(platform.calls) == 1
    assert clock.slept == []
    with pytest.raises(NoTurn):
        await pacer.take_turn(OTHER_CHAT, max_wait=60)


async def test_a_turn_further_away_than_the_longest_wait_is_late_and_sends_nothing(
        clock: VirtualClock) -> None:
    pacer = LocalPacer(clock)
    await pacer.hold_off(CHAT, 100)
    platform = Platform(clock, ["never"])
    with pytest.raises(Mapped, match="late by 100 s"):
        await send(platform, pacer, Limits(attempts=3, max_wait=10))
    assert platform.calls == []


async def test_an_answer_lost_is_never_sent_again(clock: VirtualClock) -> None:
    lost = Lost("no answer")
    platform = Platform(clock, [lost, "twice"])
    with pytest.raises(Lost) as raised:
        await send(platform, LocalPacer(clock), Limits(attempts=3, max_wait=60))
    assert raised.value is lost
    assert len(platform.calls) == 1


async def sent_parts(script: list[Exception | str], clock: VirtualClock,
                     found: dict[int, str] | None = None) -> tuple[list[str], Stopped | None]:
    """The parts "p0".."p3" sent through the loop; what stopped them, if anything."""
    platform = Platform(clock, script)
    seen: list[Stopped] = []

    async def one(part: int, message: str) -> str:
        return await send(platform, LocalPacer(clock), Limits(attempts=1, max_wait=60))

    def stopped(stop: Stopped) -> BaseException:
        seen.append(stop)
        return stop.error

    try:
        ids = await send_parts(["p0", "p1", "p2", "p3"], one, found=found, stopped=stopped,
                               outcome=mapping)
    except Exception:
        ids = []
    return ids, (seen[0] if seen else None)


async def test_a_split_post_says_how_far_it_got_and_whether_its_last_part_is_in_doubt(
        clock: VirtualClock) -> None:
    _, stop = await sent_parts(["a", "b", Lost("gone"), "d"], clock)
    assert stop is not None
    assert (stop.sent, stop.total, stop.in_doubt) == (["a", "b"], 4, True)

    _, stop = await sent_parts(["a", Refusal(lambda _: Refused(Mapped("no")))], clock)
    assert stop is not None
    assert (stop.sent, stop.in_doubt) == (["a"], False)
    assert isinstance(stop.error, Mapped)


async def test_a_post_in_doubt_is_finished_from_the_parts_that_arrived(
        clock: VirtualClock) -> None:
    sent: list[int] = []

    async def one(part: int, message: str) -> str:
        sent.append(part)
        return f"new-{part}"

    async def arrived() -> dict[int, str]:
        return {0: "old-0", 2: "old-2"}

    ids = await resume_parts(["p0", "p1", "p2", "p3"], one, arrived=arrived, what="test",
                             stopped=lambda stop: stop.error)
    assert ids == ["old-0", "new-1", "old-2", "new-3"]
    assert sent == [1, 3]

    async def nothing() -> dict[int, str]:
        return {}

    sent.clear()
    assert await resume_parts(["p0"], one, arrived=nothing, what="test",
                              stopped=lambda stop: stop.error) is None
    assert sent == []


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"Retry-After": "30"}, 30.0), ({"retry-after": ["2.5"]}, 2.5),
    ({"X-Ogw-Ratelimit-Reset": "-3"}, 0.0), ({"Retry-After": "soon"}, 1.0), ({}, 1.0),
    (None, 1.0),
])
def test_a_rate_limit_header_is_read_in_any_case_and_defaults_to_a_second(
        headers: dict[str, object] | None, seconds: float) -> None:
    name = "x-ogw-ratelimit-reset" if headers and "X-Ogw-Ratelimit-Reset" in headers \
        else "Retry-After"
    assert header_seconds(headers, name) == seconds
