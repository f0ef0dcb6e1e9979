"""Muting merged-PR notices from chat (`mute 1d`, `静音 3 天`, `unmute`): read in either
language, changed only by those who may change the chat's settings, kept in the store the
replicas share, and obeyed by every replica's notices on the clock - the muted merges
dropped, the first merge after the end announced."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import msgspec
import pytest

from bot.actions import decode_action, encode_action
from bot.chat.grammar import canonical_text, parse_command
from bot.chat.handler import CommandHandler
from bot.chat.inbound import Asker
from bot.config import ChannelConfig, Config, parse_config
from bot.delivery.batches import BatchFlusher
from bot.delivery.merges import MergeAnnouncer
from bot.delivery.notices import MergeNotifier
from bot.digests import Digests
from bot.github.events import MergedPull
from bot.live import LiveConfig
from bot.models import Command, Reply, Snapshot
from bot.render import render_reply
from bot.source import SnapshotSource
from bot.store.coordination import Coordination
from bot.store.mutes import LINGER, MOST_MUTE, Mutes, mute_length
from bot.store.redis.coordination import RedisCoordination
from bot.week import zone
from testkit import schedule
from testkit.clock import START, VirtualClock
from testkit.coordination import FlakyPort, claims_on, in_memory, memory_port
from testkit.fakes.chat import InMemoryChatSettings
from testkit.schedule import (
    SHANGHAI_MONDAY_9,
    THREE_PLATFORMS,
    CountingSource,
    FakePlatforms,
    FakePoster,
    make_config,
)
from testkit.server_support import (
    FEISHU,
    REPO,
    SLACK,
    TELEGRAM,
    example_config,
    example_snapshot,
    snapshot_pull,
)

# --- the grammar ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "kind", "value", "lang"), [
    ("mute", "mute", "", "en"),
    ("mute 1d", "mute", "1d", "en"),
    ("mute 3 days", "mute", "3d", "en"),
    ("mute 2h", "mute", "2h", "en"),
    ("mute 1w", "mute", "1w", "en"),
    ("snooze 1d", "mute", "1d", "en"),
    ("/mute@prdigest_bot 2 hours", "mute", "2h", "en"),
    ("@prdigest mute notices for a week", "mute", "1w", "en"),
    ("mute for two weeks", "mute", "2w", "en"),
    ("mute 1 month", "mute", "30d", "en"),
    ("mute forever", "mute", "", "en"),
    ("静音", "mute", "", "zh"),
    ("静音 3 天", "mute", "3d", "zh"),
    ("静音三天", "mute", "3d", "zh"),
    ("静音 1 周", "mute", "1w", "zh"),
    ("免打扰 2 小时", "mute", "2h", "zh"),
    ("静音 十二 个小时", "mute", "12h", "zh"),
    ("静音一个月", "mute", "30d", "zh"),
    ("unmute", "unmute", "", "en"),
    ("unmute notifications", "unmute", "", "en"),
    ("mute off", "unmute", "", "en"),
    ("取消静音", "unmute", "", "zh"),
    ("恢复通知", "unmute", "", "zh"),
    ("取消免打扰", "unmute", "", "zh"),
    # read, and refused by the handler with what is wrong
    ("mute 0d", "mute", "0d", "en"),
    ("mute 999 years", "mute", "364635d", "en"),
    ("mute banana", "mute", "banana", "en"),
    ("mute 30 minutes", "mute", "30m", "en"),
    ("mute -1d", "mute", "-1d", "en"),
    ("静音 0 天", "mute", "0d", "zh"),
    ("静音 半天", "mute", "半天", "zh"),
    # what may come before a length, in either language's form, reads back the same
    ("静音 FOR", "mute", "for", "zh"),
    ("静音 notices", "mute", "", "zh"),
    ("静音 off", "unmute", "", "zh"),
    ("mute for for x", "mute", "for for x", "en"),
    ("静音 abc", "mute", "abc", "zh"),
    ("静音 for 2 days", "mute", "2d", "zh"),
])
def test_mute_commands_are_read_in_either_language(text: str, kind: str, value: str,
                                                   lang: str) -> None:
    command = parse_command(text)
    assert (command.kind, command.value, command.lang) == (kind, value, lang)
    again = parse_command(canonical_text(command), lang="en")
    assert (again.kind, again.value) == (kind, value)


@pytest.mark.parametrize("text", ["mutex", "muted", "mute?", "unmuted please", "静音乐",
                                  "静音 香蕉",
                                  "risks for #7035 mute"])
def test_words_near_mute_are_no_mute(text: str) -> None:
    assert parse_command(text).kind not in ("mute", "unmute")


def test_a_hostile_length_is_kept_short_and_never_overflows() -> None:
    command = parse_command("mute " + "9" * 1500 + " years")
    assert command.kind == "mute"
    with pytest.raises(ValueError):
        mute_length(command.value)
    long_words = parse_command("mute " + "x" * 1900)
    assert len(long_words.value) <= 64


@pytest.mark.parametrize(("value", "length"), [
    ("", None), ("1h", timedelta(hours=1)), ("3d", timedelta(days=3)),
    ("1w", timedelta(weeks=1)), ("90d", MOST_MUTE),
])
def test_lengths_within_the_bounds(value: str, length: timedelta | None) -> None:
    assert mute_length(value) == length


@pytest.mark.parametrize("value", ["0d", "0h", "91d", "13w", "30m", "1.5d", "-1d", "1 d",
                                   "banana", "999999999999d", "1D"])
def test_lengths_outside_the_bounds_or_unreadable(value: str) -> None:
    with pytest.raises(ValueError):
        mute_length(value)


# --- replicas --------------------------------------------------------------------------------


@dataclass
class Sender:
    """The chat platforms as notices reach them: (channel, PR) in order."""

    sent: list[tuple[str, int]] = field(default_factory=list)

    def can_send(self, channel: ChannelConfig) -> bool:
        return True

    async def send(self, channel: ChannelConfig, reply: Reply, *, thread: str | None = None,
                   key: str | None = None) -> list[str]:
        if reply.pull is not None:
            self.sent.append((channel.key, reply.pull.number))
        for notice in reply.notices:
            assert notice.pull is not None
            self.sent.append((channel.key, notice.pull.number))
        return ["m"]

    async def complete(self, channel: ChannelConfig, reply: Reply, *, key: str,
                       since: datetime, thread: str | None = None) -> list[str] | None:
        return None


@dataclass
class Replica:
    """One replica's chat and notices, over the store the replicas share."""

    handler: CommandHandler
    notifier: MergeNotifier
    merges: MergeAnnouncer

    async def ask(self, text: str, *, chat: str = TELEGRAM, user: str = "U1",
                  admin: bool = True) -> Reply:
        return await self.handler.handle(parse_command(text), channel=self.config.channel(chat),
                                         user=user, asker=asker(chat, user, admin))

    @property
    def config(self) -> Config:
        return self.handler.config

    async def merged(self, number: int) -> list[str] | None:
        """Announce PR `number`'s merge as the webhook or the poller does: the channels
        it reached, None when the merge was announced before."""
        result = await self.merges.announce(MergedPull(REPO, snapshot_pull(number),
                                                       f"sha-{number}"))
        return None if result is None else sorted(result.notified)


def asker(chat: str, user: str, admin: bool) -> Asker:
    async def is_admin() -> bool:
        return admin
    return Asker(chat=chat, user=user, chat_admin=is_admin)


def replica(port: Coordination, clock: VirtualClock, sender: Sender,
            config: Config | None = None) -> Replica:
    config = config or example_config()
    digests = Digests(config, SnapshotSource(example_snapshot()), clock=clock)
    claims = claims_on(port)
    handler = CommandHandler(digests, mutes=Mutes(port, clock=clock))
    notifier = MergeNotifier(digests, claims, sender, clock=clock,
                             mutes=Mutes(port, clock=clock))
    return Replica(handler, notifier, MergeAnnouncer(claims, notifier))


# --- chat ------------------------------------------------------------------------------------


async def test_a_mute_is_confirmed_with_its_end_in_the_chats_time_zone() -> None:
    clock = VirtualClock()
    one = replica(memory_port(clock), clock, Sender())
    reply = await one.ask("mute 1d")  # Telegram's channel: English, Europe/Berlin
    assert (reply.kind, reply.mode) == ("settings", "mute")
    assert reply.overview is not None and reply.overview.muted
    until = reply.overview.muted_until
    assert until is not None and until == START + timedelta(days=1)
    assert until.utcoffset() == zone("Europe/Berlin").utcoffset(until.replace(tzinfo=None))
    text = render_reply(reply, "text")
    local = (START + timedelta(days=1)).astimezone(zone("Europe/Berlin"))
    assert f"muted until {local:%Y-%m-%d %H:%M} (Europe/Berlin)" in text
    assert "weekly digest still comes" in text

    zh = await one.ask("静音 3 天", chat=FEISHU)  # Feishu's channel: Asia/Shanghai
    shanghai = (START + timedelta(days=3)).astimezone(zone("Asia/Shanghai"))
    assert f"合并通知已静音，直到 {shanghai:%Y-%m-%d %H:%M}（Asia/Shanghai）" in \
        render_reply(zh, "text")


async def test_settings_shows_the_mute_and_unmute_ends_it() -> None:
    clock = VirtualClock()
    one = replica(memory_port(clock), clock, Sender())
    assert "muted" not in render_reply(await one.ask("settings"), "text")
    await one.ask("mute")
    shown = await one.ask("settings")
    assert shown.overview is not None and shown.overview.muted
    assert shown.overview.muted_until is None
    assert "muted until someone sends “unmute”" in render_reply(shown, "text")
    assert "直到有人发送 `取消静音`" in render_reply(await one.ask("设置"), "markdown")

    back = await one.ask("unmute")
    assert (back.mode, back.overview is not None and back.overview.muted) == ("unmute", False)
    assert "notices are on again" in render_reply(back, "text")
    again = await one.ask("取消静音")
    assert again.mode == "not-muted"
    assert "本来就没有静音" in render_reply(again, "text")


@pytest.mark.parametrize(("text", "words"), [
    ("mute 0d", "“mute 0d”: say how long, from an hour to 90 days"),
    ("mute 999 years", "“mute 999 years”"),
    ("mute banana", "“mute banana”"),
    ("mute 30 minutes", "from an hour to 90 days"),
    ("静音 0 天", "无法按“静音 0 天”静音通知"),
    ("静音 半天", "在 1 小时到 90 天之间"),
])
async def test_a_length_out_of_bounds_is_refused_in_the_askers_language(
        text: str, words: str) -> None:
    clock = VirtualClock()
    port = memory_port(clock)
    one = replica(port, clock, Sender())
    reply = await one.ask(text)
    assert (reply.kind, reply.error) == ("error", "mute-length")
    assert words in render_reply(reply, "text")
    assert await Mutes(port, clock=clock).get(TELEGRAM) is None


async def test_only_those_who_may_change_the_settings_may_mute() -> None:
    clock = VirtualClock()
    port = memory_port(clock)
    one = replica(port, clock, Sender())
    refused = await one.ask("mute 1d", admin=False)
    assert (refused.kind, refused.error) == ("error", "settings-not-admin")
    assert "Only this chat's admins" in render_reply(refused, "text")
    # Slack's channel lists its admins in the file: they alone may.
    not_listed = await one.ask("静音 1 天", chat=SLACK, user="USOMEONE")
    assert not_listed.error == "settings-not-admin"
    assert "只有" in render_reply(not_listed, "text")
    assert await Mutes(port, clock=clock).get(TELEGRAM) is None
    assert await Mutes(port, clock=clock).get(SLACK) is None
    await one.ask("mute 1d")
    assert (await one.ask("unmute", admin=False)).error == "settings-not-admin"
    assert await Mutes(port, clock=clock).get(TELEGRAM) is not None
    listed = await one.ask("静音 1 天", chat=SLACK, user="U0ADMIN1")
    assert (listed.kind, listed.mode) == ("settings", "mute")


async def test_a_chat_not_set_up_or_a_server_without_a_shared_store_is_told_so() -> None:
    clock = VirtualClock()
    one = replica(memory_port(clock), clock, Sender())
    stranger = await one.ask("mute 1d", chat="slack:CSTRANGER")
    assert stranger.error == "not-set-up"
    digests = Digests(example_config(), SnapshotSource(example_snapshot()), clock=clock)
    alone = CommandHandler(digests)  # no store shared with the notices
    reply = await alone.handle(parse_command("mute 1d"),
                               channel=example_config().channel(TELEGRAM),
                               asker=asker(TELEGRAM, "U1", True))
    assert reply.error == "settings-unavailable"


async def test_a_store_that_fails_refuses_the_mute_politely() -> None:
    clock = VirtualClock()
    port = FlakyPort(memory_port(clock))
    one = replica(port, clock, Sender())
    port.down = True
    reply = await one.ask("mute 1d")
    assert (reply.kind, reply.error) == ("error", "settings-failed")
    assert "could not be saved" in render_reply(reply, "text")


async def test_a_buttons_mute_command_is_the_typed_one() -> None:
    clock = VirtualClock()
    one = replica(memory_port(clock), clock, Sender())
    data = encode_action(Command(kind="mute", value="1d"))
    assert data is not None
    clicked = decode_action(data, lang="zh")
    assert clicked == Command(kind="mute", lang="zh", value="1d")
    reply = await one.handler.handle(clicked, channel=one.config.channel(TELEGRAM),
                                     asker=asker(TELEGRAM, "U1", True))
    assert reply.overview is not None and reply.overview.muted_until == \
        START + timedelta(days=1)
    # Data is untrusted: a length no one could type is refused as typed.
    forged = decode_action(encode_action(Command(kind="mute", value="99999d")) or "", lang="en")
    assert forged is not None
    refused = await one.handler.handle(forged, channel=one.config.channel(TELEGRAM),
                                       asker=asker(TELEGRAM, "U1", True))
    assert (refused.kind, refused.error) == ("error", "mute-length")
    assert "“mute 99999d”" in render_reply(refused, "text")


# --- notices ---------------------------------------------------------------------------------


async def test_a_muted_channel_gets_no_notice_until_the_mute_ends() -> None:
    """Telegram's channel follows `trainer`; it mutes for a day on one replica, and the
    other replica's notices drop its merges for that day - not sent after it either -
    then announce the first merge after the end."""
    clock = VirtualClock()
    port = memory_port(clock)
    sender = Sender()
    one, other = replica(port, clock, sender), replica(port, clock, sender)
    await one.ask("mute 1d")

    assert await other.merged(1212) == [FEISHU, SLACK]  # trainer, npu, checkpoint
    clock.advance(timedelta(hours=23, minutes=59))
    assert await other.merged(1202) == []  # trainer alone: muted
    clock.advance(timedelta(minutes=2))
    assert await other.merged(1191) == [TELEGRAM]
    # A muted merge told again after the end (a redelivery, the poller) is not announced.
    assert await other.merged(1202) is None
    assert sender.sent == [(SLACK, 1212), (FEISHU, 1212), (TELEGRAM, 1191)]


async def test_unmute_brings_the_notices_back_at_once() -> None:
    clock = VirtualClock()
    port = memory_port(clock)
    sender = Sender()
    one, other = replica(port, clock, sender), replica(port, clock, sender)
    await one.ask("静音")
    clock.advance(timedelta(days=30))
    assert await other.merged(1202) == []
    await other.ask("恢复通知")
    assert await one.merged(1191) == [TELEGRAM]


async def test_a_mute_outlives_a_restart() -> None:
    """The store outlives the replicas: new objects over it find the mute."""
    clock = VirtualClock()
    port = memory_port(clock)
    sender = Sender()
    await replica(port, clock, sender).ask("mute 2h")
    restarted = replica(port, clock, sender)
    assert await restarted.merged(1202) == []
    clock.advance(timedelta(hours=2))
    assert await restarted.merged(1191) == [TELEGRAM]


async def test_an_ended_mute_leaves_nothing_in_the_store() -> None:
    clock = VirtualClock()
    port = memory_port(clock)
    one = replica(port, clock, Sender())
    await one.ask("mute 2h")
    key = port.keys.notice_mute(TELEGRAM)
    assert await port.claims.get(key) is not None
    clock.advance(timedelta(hours=2) + LINGER + timedelta(seconds=1))
    assert await port.claims.get(key) is None


async def test_an_unreadable_mute_fails_the_notice_to_be_tried_again() -> None:
    clock = VirtualClock()
    port = FlakyPort(memory_port(clock))
    sender = Sender()
    one = replica(port, clock, sender)
    port.down_on = "notice-mute"
    result = await one.notifier.announce(REPO, snapshot_pull(1202))
    assert (result.failed, result.notified, sender.sent) == ([TELEGRAM], [], [])
    port.down = False
    assert await one.merged(1202) == [TELEGRAM]


async def test_a_batch_falling_due_while_muted_is_dropped() -> None:
    clock = VirtualClock()
    port = memory_port(clock)
    sender = Sender()
    file = example_config()
    batching = msgspec.structs.replace(file, channels=tuple(
        msgspec.structs.replace(channel, notice_batch_minutes=10)
        if channel.key == TELEGRAM else channel for channel in file.channels))
    one = replica(port, clock, sender, batching)
    assert one.notifier.batches is not None
    flusher = BatchFlusher(batching, one.notifier, one.notifier.batches, claims_on(port),
                           clock=clock)
    assert (await one.notifier.announce(REPO, snapshot_pull(1202))).batched == [TELEGRAM]
    await one.ask("mute 1h")
    clock.advance(timedelta(minutes=11))
    assert (await flusher.flush_due()).muted == [TELEGRAM]
    clock.advance(timedelta(hours=1))
    assert (await one.notifier.announce(REPO, snapshot_pull(1191))).batched == [TELEGRAM]
    clock.advance(timedelta(minutes=11))
    assert (await flusher.flush_due()).notified == [TELEGRAM]
    assert sender.sent == [(TELEGRAM, 1191)]


# --- on Redis --------------------------------------------------------------------------------

REDIS_TOPOLOGIES = ("single", "cluster")


async def test_on_redis_a_mute_is_shared_by_replicas_and_outlives_a_restart(
        redis_url: str) -> None:
    """Two replicas, each with its own client of one Redis: one mutes, the other's
    notices obey; replicas started afresh over the same Redis still find the mute."""
    clock = VirtualClock()
    sender = Sender()
    ports = [RedisCoordination.from_url(redis_url) for _ in range(4)]
    try:
        one, other = replica(ports[0], clock, sender), replica(ports[1], clock, sender)
        reply = await one.ask("静音 1 天")
        assert reply.overview is not None and reply.overview.muted
        key = ports[0].keys.notice_mute(TELEGRAM)
        left_ms = await ports[0].client.pttl(key)
        assert timedelta(days=1) < timedelta(milliseconds=left_ms) <= timedelta(days=1) + LINGER

        assert await other.merged(1202) == []
        restarted = replica(ports[2], clock, sender)
        shown = await restarted.ask("settings")
        assert shown.overview is not None and shown.overview.muted_until == \
            START + timedelta(days=1)
        clock.advance(timedelta(days=1))
        assert await restarted.merged(1191) == [TELEGRAM]
        assert sender.sent == [(TELEGRAM, 1191)]

        await restarted.ask("mute")  # until unmuted: kept for good
        assert await ports[3].client.pttl(key) == -1
        assert await replica(ports[3], clock, sender).merged(1209) == [FEISHU]
        assert (await other.ask("unmute")).mode == "unmute"
        assert await ports[3].client.exists(key) == 0
        assert await one.merged(1212) == [FEISHU, SLACK, TELEGRAM]
    finally:
        for port in ports:
            await port.close()


async def test_the_weekly_digest_is_not_muted(snapshot: Snapshot) -> None:
    clock = VirtualClock(SHANGHAI_MONDAY_9 - timedelta(hours=1))
    config = make_config(THREE_PLATFORMS)
    platforms = FakePlatforms(clock)
    async with in_memory(clock) as port:
        mutes = Mutes(port, clock=clock)
        for channel in config.channels:
            await mutes.mute(channel.key, None)
        one = schedule.scheduler(config, CountingSource(snapshot), port,
                                 FakePoster(platforms, "r1"), clock)
        results = await schedule.tick_at(one, SHANGHAI_MONDAY_9)
        assert all([await mutes.get(channel.key) for channel in config.channels])
    assert schedule.statuses(results) == {"posted": 3}
    assert len(platforms.delivered) == 3


async def test_a_chat_that_unfollows_its_last_repository_forgets_its_mute() -> None:
    clock = VirtualClock()
    port = memory_port(clock)
    store = InMemoryChatSettings()
    live = LiveConfig(parse_config({"repos": {REPO: {}}}), store, clock=clock)
    digests = Digests(live, SnapshotSource(example_snapshot()), clock=clock)
    handler = CommandHandler(digests, live=live, mutes=Mutes(port, clock=clock))
    chat = "slack:CNEW"

    async def ask(text: str) -> Reply:
        return await handler.handle(parse_command(text), channel=await handler.chat_channel(chat),
                                    user="U1", asker=asker(chat, "U1", True))

    assert (await ask(f"follow {REPO}")).mode == "follow"
    assert (await ask("mute")).mode == "mute"
    assert await port.claims.get(port.keys.notice_mute(chat)) is not None
    assert (await ask(f"unfollow {REPO}")).mode == "unfollow"
    assert await port.claims.get(port.keys.notice_mute(chat)) is None
    again = await ask(f"follow {REPO}")
    assert again.overview is not None and not again.overview.muted
