"""Pacing in one process: rates as the config writes them (checked at load), lanes spaced
at their rate, a chat waiting for its own turn holding no other chat up, a 429's hold
keeping every sender out of its lanes, and each platform's lanes from its settings."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from adapters.feishu.settings import FeishuSettings
from adapters.registry import load_settings
from adapters.slack.settings import SlackSettings, slack_settings
from adapters.telegram.settings import TelegramSettings
from bot.errors import ConfigError
from bot.pacing import Lane, LocalPacer, NoTurn, Rate, parse_rate
from testkit.clock import VirtualClock
from testkit.fakes.rate_limit import FakeRateLimit

FAST = Rate(20, "s")  # 50 ms between turns: quick tests, gaps far above timer noise


@pytest.mark.parametrize(("text", "count", "unit", "interval"), [
    ("30/s", 30, "s", 1 / 30), ("20/min", 20, "min", 3.0), (" 1000 / min ", 1000, "min", 0.06),
    ("5/h", 5, "h", 720.0),
])
def test_a_rate_is_messages_per_period(text: str, count: int, unit: str,
                                       interval: float) -> None:
    rate = parse_rate(text, "x")
    assert (rate.count, rate.unit) == (count, unit)
    assert rate.interval == pytest.approx(interval)
    assert parse_rate(str(rate), "x") == rate


@pytest.mark.parametrize("text", ["0/s", "30", "30/day", "-1/s", "1.5/s", "fast", "",
                                  "2000000/s"])
def test_a_rate_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^platforms\.slack\.post_rate: expected messages"):
        parse_rate(text, "platforms.slack.post_rate")


@pytest.mark.parametrize(("platform", "field"), [
    ("slack", "post_rate"), ("slack", "channel_post_rate"), ("telegram", "post_rate"),
    ("telegram", "group_post_rate"), ("telegram", "chat_post_rate"), ("feishu", "post_rate"),
    ("feishu", "chat_post_rate"),
])
def test_a_bad_rate_in_the_config_fails_at_load_naming_its_field(
        tmp_path: Path, platform: str, field: str) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text(f'[platforms.{platform}]\n{field} = "30 a second"\n')
    with pytest.raises(ConfigError, match=rf"platforms\.{platform}\.{field}: expected"):
        load_settings(path)


def test_configured_rates_set_the_lanes(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text('[platforms.slack]\npost_rate = "5/s"\nchannel_post_rate = "2/min"\n')
    workspace, channel = slack_settings(load_settings(path)).post_lanes("C1")
    assert (workspace.name, workspace.rate) == ("slack", Rate(5, "s"))
    assert (channel.name, channel.rate) == ("slack:C1", Rate(2, "min"))


def test_each_platform_paces_at_its_documented_rates_by_default() -> None:
    """Slack: ~1/s per channel and several hundred a minute per workspace; Telegram:
    ~30/s per bot, 20/min per group, 1/s per chat; Feishu: 1000/min per app (50/s), 5/s
    per chat."""
    assert [lane.rate for lane in SlackSettings().post_lanes("C1")] == [
        Rate(300, "min"), Rate(1, "s")]
    telegram = TelegramSettings()
    assert [lane.rate for lane in telegram.post_lanes("-1001234567890")] == [
        Rate(30, "s"), Rate(20, "min")]
    assert [lane.rate for lane in telegram.post_lanes("@announcements")] == [
        Rate(30, "s"), Rate(20, "min")]
    assert [lane.rate for lane in telegram.post_lanes("4242")] == [Rate(30, "s"), Rate(1, "s")]
    assert [lane.rate for lane in FeishuSettings().post_lanes("oc_1")] == [
        Rate(1000, "min"), Rate(5, "s")]
    # Every lane of one send starts with the bot's, so the widest one tags them all.
    assert {SlackSettings().post_lanes(c)[0] for c in ("C1", "C2")} == {
        Lane("slack", Rate(300, "min"))}


async def turns(pacer: LocalPacer, lanes: list[Lane], count: int,
                platform: FakeRateLimit) -> list[float]:
    """When each of `count` messages through `lanes`, sent at once, got its turn (on the
    pacer's clock) and reached `platform` (a bucket at the lane's rate)."""
    async def one() -> float:
        await pacer.take_turn(lanes, max_wait=10)
        assert platform.take() is None, "the platform refused a paced message"
        return pacer.clock.monotonic()
    return sorted(await asyncio.gather(*(one() for _ in range(count))))


async def test_messages_in_one_lane_never_exceed_its_rate() -> None:
    clock = VirtualClock()
    rate = Rate(10, "s")
    platform = FakeRateLimit(per_second=10, burst=1, clock=clock)
    started = clock.monotonic()
    granted = await turns(LocalPacer(clock), [Lane("bot", rate)], 8, platform)
    assert platform.refused == 0 and platform.taken == 8
    assert granted[-1] - started == pytest.approx(7 * rate.interval)


async def test_a_chat_waiting_for_its_turn_holds_no_other_chat_up() -> None:
    clock = VirtualClock()
    pacer = LocalPacer(clock)
    bot = Lane("bot", FAST)
    slow_chat = [bot, Lane("bot:slow", Rate(1, "s"))]
    other_chat = [bot, Lane("bot:other", Rate(1, "s"))]
    await pacer.take_turn(slow_chat, max_wait=5)
    started = clock.monotonic()

    async def timed(lanes: list[Lane]) -> float:
        await pacer.take_turn(lanes, max_wait=5)
        return clock.monotonic() - started

    second_in_slow, first_in_other = await asyncio.gather(timed(slow_chat), timed(other_chat))
    assert second_in_slow == pytest.approx(1.0)  # the slow chat's own rate
    assert first_in_other <= FAST.interval + 1e-9  # did not wait behind it


async def test_a_hold_keeps_every_sender_out_of_its_lanes_and_a_short_wait_books_nothing(
) -> None:
    clock = VirtualClock()
    pacer = LocalPacer(clock)
    bot = Lane("bot", FAST)
    await pacer.hold_off([bot, Lane("bot:c1", FAST)], 0.5)
    with pytest.raises(NoTurn) as late:
        await pacer.take_turn([bot, Lane("bot:c2", FAST)], max_wait=0.1)
    assert late.value.seconds == pytest.approx(0.5)
    started = clock.monotonic()
    await pacer.take_turn([bot, Lane("bot:c2", FAST)], max_wait=5)
    waited = clock.monotonic() - started
    assert waited == pytest.approx(0.5)  # the hold, and nothing booked before


async def test_messages_that_wake_after_a_stall_take_new_turns_rather_than_crowd() -> None:
    """Three messages sleep until their turns; the process stalls past all three. Going
    as they wake would post them at once; they book again, spaced at the rate."""
    clock = VirtualClock()
    pacer = LocalPacer(clock)
    lanes = [Lane("bot", Rate(10, "s"))]
    await pacer.take_turn(lanes, max_wait=1)
    sent: list[float] = []

    async def send() -> None:
        await pacer.take_turn(lanes, max_wait=5)
        sent.append(clock.monotonic())

    waiting = [asyncio.create_task(send()) for _ in range(3)]
    while len(clock.slept) < 3:  # each books its turn and sleeps
        await asyncio.sleep(0)
    clock.advance(0.8)  # the stall: time passes and all three wake at once, late
    await asyncio.gather(*waiting)
    gaps = [b - a for a, b in itertools.pairwise(sent)]
    assert len(sent) == 3 and min(gaps) >= 0.1 - 1e-9


async def test_a_pacer_forgets_lanes_whose_turn_has_passed() -> None:
    clock = VirtualClock()
    pacer = LocalPacer(clock)
    for chat in range(3000):
        await pacer.take_turn([Lane("bot", Rate(1_000_000, "s")), Lane(f"bot:{chat}", FAST)],
                              max_wait=1)
        clock.advance(1.0)
    assert len(pacer) <= 1100
