"""A chat sets itself up from chat (`bot.chat.settings`): follow a repository, its weekly
schedule, time zone and language, `settings`; within the operator's `[chat]` bounds,
every refusal a reply in the asker's language that stores nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

import msgspec
import pytest

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.chat.inbound import Asker
from bot.clock import HeldClock
from bot.config import Config, parse_config
from bot.digests import Digests
from bot.errors import SourceError
from bot.live import LiveConfig
from bot.models import Reply
from bot.render import render_reply
from bot.source import RepoFacts, ReviewQueue
from testkit.chat_week import NOW, SNAPSHOT
from testkit.fakes.chat import InMemoryChatSettings, InMemorySubscriptionStore, RecordingSource

FILE = parse_config({
    "repos": {"verl-project/verl": {}, "acme/vault": {"private": True}},
    "channels": [{"platform": "slack", "id": "CFILE", "repo": "verl-project/verl"}],
    "chat": {"repos": ["acme/*", "friends/app"], "private_repos": ["acme/secret"],
             "admins": ["slack:UBOSS"], "max_channels": 3},
})


class Lookups:
    """GitHub as chat asks it: the repositories it has, and how often it was asked."""

    def __init__(self, known: dict[str, bool] | None = None, *, fail: bool = False) -> None:
        self.known = known if known is not None else {
            "acme/lumen": False, "acme/secret": True, "acme/hidden": True,
            "friends/app": False, "verl-project/verl": False}
        self.fail = fail
        self.asked: list[str] = []

    def repository(self, repo: str) -> RepoFacts | None:
        self.asked.append(repo)
        if self.fail:
            raise SourceError("GitHub is down")
        name = next((n for n in self.known if n.lower() == repo.lower()), None)
        return None if name is None else RepoFacts(name=name, private=self.known[name])

    def review_queue(self, repos: Sequence[str]) -> ReviewQueue:
        raise AssertionError("not asked here")


def admin(answer: bool) -> Callable[[], Awaitable[bool]]:
    async def ask() -> bool:
        return answer
    return ask


def broken_admin() -> Callable[[], Awaitable[bool]]:
    async def ask() -> bool:
        raise ConnectionError("the platform is away")
    return ask


class World:
    def __init__(self, file: Config = FILE, *, redis: bool = True,
                 lookups: Lookups | None = None) -> None:
        self.store = InMemoryChatSettings()
        self.live = LiveConfig(file, self.store if redis else None)
        self.lookups = lookups or Lookups()
        digests = Digests(self.live, RecordingSource(SNAPSHOT),
                          subscriptions=InMemorySubscriptionStore(), clock=HeldClock(NOW))
        self.handler = CommandHandler(digests, live=self.live, lookups=self.lookups)

    async def ask(self, text: str, *, chat: str = "slack:CNEW", user: str = "U1",
                  is_admin: Callable[[], Awaitable[bool]] | None = None,
                  direct: bool = False) -> Reply:
        asker = Asker(chat=chat, user=user, direct=direct,
                      chat_admin=is_admin if is_admin is not None else admin(True))
        channel = await self.handler.chat_channel(chat)
        return await self.handler.handle(parse_command(text), channel=channel, user=user,
                                         asker=asker)


# --- setting a chat up ------------------------------------------------------------------


async def test_a_chat_not_in_the_file_follows_a_repository_and_sets_its_schedule() -> None:
    world = World()
    reply = await world.ask("follow acme/lumen")
    assert (reply.kind, reply.mode) == ("settings", "follow")
    assert reply.overview is not None and reply.overview.origin == "chat"
    assert reply.overview.repositories == ("acme/lumen",)
    assert reply.overview.lang == "en"  # the asker's language
    channel = world.live.current.channel("slack:CNEW")
    assert channel is not None and channel.repo == "acme/lumen"

    reply = await world.ask("每周五下午5点半")
    assert (reply.kind, reply.lang, reply.mode) == ("settings", "zh", "schedule")
    assert reply.overview is not None and reply.overview.schedule == "30 17 * * FRI"
    assert reply.overview.next_post == datetime(2026, 7, 24, 17, 30,
                                                tzinfo=reply.overview.next_post.tzinfo)
    assert world.store.chats["slack:CNEW"].schedule == "30 17 * * FRI"
    text = render_reply(reply, "text")
    assert "每周五 17:30" in text and "acme/lumen" in text

    await world.ask("timezone Europe/Berlin")
    await world.ask("lang zh")
    channel = world.live.current.channel("slack:CNEW")
    assert channel is not None
    assert (channel.timezone, channel.lang, channel.schedule) == (
        "Europe/Berlin", "zh", "30 17 * * FRI")
    assert world.store.chats["slack:CNEW"].changed_by == "slack:U1"


async def test_settings_shows_what_the_chat_gets_in_either_language() -> None:
    world = World()
    assert "not set up yet" in render_reply(await world.ask("settings"), "text")
    await world.ask("follow acme/lumen")
    text = render_reply(await world.ask("设置"), "text")
    assert "仓库：acme/lumen。" in text and "周报：每周一 09:00，时区 Asia/Shanghai。" in text
    file_text = render_reply(await world.ask("settings", chat="slack:CFILE"), "text")
    assert "These settings are in the config file" in file_text


async def test_unfollowing_the_last_repository_forgets_the_chat() -> None:
    world = World()
    await world.ask("follow acme/lumen")
    await world.ask("follow friends/app")
    reply = await world.ask("unfollow acme/lumen")
    assert reply.overview is not None and reply.overview.repositories == ("friends/app",)
    reply = await world.ask("取消关注 friends/app")
    assert reply.overview is not None and reply.overview.origin == "none"
    assert world.store.chats == {} and world.live.current.channel("slack:CNEW") is None


async def test_a_private_repository_the_operator_listed_is_followed() -> None:
    world = World()
    reply = await world.ask("follow acme/secret")
    assert reply.kind == "settings", reply
    assert world.store.chats["slack:CNEW"].private == ("acme/secret",)
    assert world.live.current.repo("acme/secret").private


async def test_who_may_change_settings() -> None:
    world = World()
    # The chat's admin on its platform; in a direct conversation its user; a listed admin.
    assert (await world.ask("follow acme/lumen", is_admin=admin(True))).kind == "settings"
    assert (await world.ask("follow friends/app", chat="slack:DME", is_admin=admin(False),
                            direct=True)).kind == "settings"
    assert (await world.ask("lang zh", user="UBOSS", is_admin=admin(False))).kind == \
        "settings"
    anyone = World(msgspec.structs.replace(FILE, chat=msgspec.structs.replace(
        FILE.chat, changes_by="anyone")))
    assert (await anyone.ask("follow acme/lumen", is_admin=admin(False))).kind == "settings"


# --- refusals: a clear reply in the asker's language, nothing stored --------------------

# (text, how it is asked, error key)
REFUSALS: list[tuple[str, dict[str, object], str]] = [
    ("follow strangers/repo", {}, "follow-not-allowed"),
    ("关注 strangers/repo", {}, "follow-not-allowed"),
    ("follow acme/hidden", {}, "follow-private"),
    ("关注 acme/hidden", {}, "follow-private"),
    ("follow acme/vault", {}, "follow-private"),
    ("follow acme/nothing", {}, "repo-unknown"),
    ("follow acme/lumen", {"is_admin": admin(False)}, "settings-not-admin"),
    ("关注 acme/lumen", {"is_admin": admin(False)}, "settings-not-admin"),
    ("follow acme/lumen", {"is_admin": broken_admin()}, "admin-unknown"),
    ("follow acme/lumen", {"chat": "slack:CFILE"}, "settings-in-file"),
    ("schedule mon 9:00", {}, "not-set-up"),
    ("unfollow acme/lumen", {}, "not-following"),
]


@pytest.mark.parametrize(("text", "how", "key"), REFUSALS,
                         ids=[r[0] + "-" + r[2] for r in REFUSALS])
async def test_a_refusal_is_a_reply_in_the_askers_language_and_stores_nothing(
        text: str, how: dict[str, object], key: str) -> None:
    world = World()
    reply = await world.ask(text, **how)  # type: ignore[arg-type]
    assert (reply.kind, reply.error) == ("error", key)
    assert reply.lang == parse_command(text).lang
    assert world.store.writes == 0 and world.store.chats == {}
    assert world.live.current.channel("slack:CNEW") is None
    rendered = render_reply(reply, "text")
    assert rendered.strip() and "Something went wrong" not in rendered
    assert ("。" in rendered) == (reply.lang == "zh")


async def test_an_owner_outside_the_bounds_costs_no_github_request() -> None:
    world = World()
    await world.ask("follow strangers/repo")
    assert world.lookups.asked == []


@pytest.mark.parametrize(("text", "key"), [
    ("schedule sometimes", "schedule-unreadable"), ("timezone Mars/Olympus", "unknown-timezone"),
    ("lang fr", "unknown-lang")])
async def test_a_bad_value_is_refused_and_the_setting_stays(text: str, key: str) -> None:
    world = World()
    await world.ask("follow acme/lumen")
    before = dict(world.store.chats)
    reply = await world.ask(text)
    assert (reply.kind, reply.error) == ("error", key)
    assert world.store.chats == before


async def test_without_redis_nothing_is_stored_and_the_reply_says_why() -> None:
    world = World(redis=False)
    reply = await world.ask("follow acme/lumen")
    assert (reply.kind, reply.error) == ("error", "settings-unavailable")
    assert "REDIS_URL" in render_reply(reply, "text")
    zh = await world.ask("关注 acme/lumen")
    assert "Redis" in render_reply(zh, "text") and zh.lang == "zh"


async def test_a_failing_store_refuses_the_change() -> None:
    world = World()
    world.store.fail = True
    reply = await world.ask("follow acme/lumen")
    assert (reply.kind, reply.error) == ("error", "settings-failed")
    world.store.fail = False
    assert world.store.chats == {}


async def test_github_down_refuses_the_follow() -> None:
    world = World(lookups=Lookups(fail=True))
    reply = await world.ask("follow acme/lumen")
    assert (reply.kind, reply.error) == ("error", "source-unavailable")
    assert world.store.chats == {}


async def test_the_operators_most_chats_are_not_exceeded() -> None:
    world = World()
    for index in range(3):
        assert (await world.ask("follow acme/lumen", chat=f"slack:C{index}")).kind == "settings"
    reply = await world.ask("follow acme/lumen", chat="slack:C9")
    assert (reply.kind, reply.error) == ("error", "too-many-chats")
    assert sorted(world.store.chats) == ["slack:C0", "slack:C1", "slack:C2"]


async def test_a_file_channel_may_be_changed_from_chat_when_the_file_says_so() -> None:
    open_file = msgspec.structs.replace(FILE, chat=msgspec.structs.replace(
        FILE.chat, file_channels="chat"))
    world = World(open_file)
    reply = await world.ask("schedule fri 17:00", chat="slack:CFILE")
    assert reply.kind == "settings" and reply.overview is not None
    assert reply.overview.origin == "both" and reply.overview.schedule == "0 17 * * FRI"
    assert world.store.chats["slack:CFILE"].file_values == {"schedule": "0 9 * * MON"}
    unfollow = await world.ask("unfollow verl-project/verl", chat="slack:CFILE")
    assert (unfollow.kind, unfollow.error) == ("error", "repo-in-file")


async def test_a_chat_made_channels_topics_are_changed_by_its_admins_only() -> None:
    world = World()
    await world.ask("follow verl-project/verl")
    refused = await world.ask("subscribe npu", is_admin=admin(False))
    assert (refused.kind, refused.error) == ("error", "settings-not-admin")
    accepted = await world.ask("subscribe ckpt", is_admin=admin(True))
    assert accepted.kind == "subscribed"


async def test_a_chat_not_set_up_is_told_how_to_set_itself_up() -> None:
    world = World()
    reply = await world.ask("digest")
    assert (reply.error, dict(reply.params)) == ("channel-not-configured", {"follow": "yes"})
    assert "follow owner/repo" in render_reply(reply, "text")
    no_redis = await World(redis=False).ask("digest")
    assert "an operator can add it" in render_reply(no_redis, "text")


def test_the_clock_of_the_week_is_the_tests() -> None:
    assert NOW.astimezone(UTC).date().isoformat() == "2026-07-22"


async def test_a_chat_follows_at_most_so_many_repositories() -> None:
    known = {f"acme/r{i}": False for i in range(12)}
    world = World(lookups=Lookups(known))
    for index in range(10):
        assert (await world.ask(f"follow acme/r{index}")).kind == "settings"
    reply = await world.ask("关注 acme/r10")
    assert (reply.kind, reply.error, reply.lang) == ("error", "too-many-repos", "zh")
    assert "最多可以关注 10 个仓库" in render_reply(reply, "text")
    assert len(world.store.chats["slack:CNEW"].repos) == 10
