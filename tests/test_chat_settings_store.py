"""Chats' own settings: the store (Redis, on one server and a Cluster, and its in-memory
twin, held to one contract) and the config in force made from them within the file's
bounds (`bot.live`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime

import msgspec
import pytest

from bot.config import Config, parse_config
from bot.links import report_url
from bot.live import LiveConfig, describe_changes, effective_config, follow_refusal
from bot.store.chat_settings import ChatSettings, ChatSettingsStore
from bot.store.keys import Keys
from bot.store.redis.chat_settings import RedisChatSettings
from bot.store.redis.client import sync_client
from testkit.fakes.chat import InMemoryChatSettings
from testkit.redis_topologies import flush

LUMEN = ChatSettings(repos=("acme/lumen",), lang="en", schedule="0 10 * * FRI",
                     timezone="Europe/Berlin", changed_by="slack:U1",
                     changed_at=datetime(2026, 7, 22, tzinfo=UTC))


@pytest.fixture(params=[pytest.param("redis", marks=pytest.mark.redis),
                        pytest.param("cluster", marks=pytest.mark.redis), "memory"])
def store(request: pytest.FixtureRequest) -> Iterator[ChatSettingsStore]:
    """Redis on one server, on a real Redis Cluster (both `redis`), and the in-memory
    twin."""
    if request.param == "memory":
        yield InMemoryChatSettings()
        return
    name = "redis_cluster_url" if request.param == "cluster" else "redis_server_url"
    url = str(request.getfixturevalue(name))
    flush(url)
    client = sync_client(url)
    yield RedisChatSettings(client)
    client.close()


# --- the store's contract ---------------------------------------------------------------


def test_settings_are_kept_and_read_back(store: ChatSettingsStore) -> None:
    assert store.revision() is None and store.all() == {} and store.get("slack:C1") is None
    assert store.put("slack:C1", LUMEN)
    first = store.revision()
    assert first is not None
    assert store.get("slack:C1") == LUMEN
    assert store.all() == {"slack:C1": LUMEN}
    changed = msgspec.structs.replace(LUMEN, lang="zh")
    assert store.put("slack:C1", changed)
    assert store.revision() not in (None, first)
    assert store.all() == {"slack:C1": changed}


def test_removing_a_chat_forgets_it_and_changes_the_revision(store: ChatSettingsStore) -> None:
    store.put("slack:C1", LUMEN)
    store.put("telegram:-100", LUMEN)
    before = store.revision()
    store.remove("slack:C1")
    assert store.all() == {"telegram:-100": LUMEN}
    assert store.revision() != before
    unchanged = store.revision()
    store.remove("slack:C1")  # not there: no change
    assert store.revision() == unchanged


def test_a_new_chat_beyond_the_most_is_not_stored(store: ChatSettingsStore) -> None:
    assert store.put("slack:C1", LUMEN, most=2)
    assert store.put("slack:C2", LUMEN, most=2)
    assert not store.put("slack:C3", LUMEN, most=2)
    assert store.get("slack:C3") is None
    assert store.put("slack:C1", msgspec.structs.replace(LUMEN, lang="zh"), most=2)  # known
    assert sorted(store.all()) == ["slack:C1", "slack:C2"]


def test_an_unreadable_entry_is_left_out(redis_url: str) -> None:
    client = sync_client(redis_url)
    store = RedisChatSettings(client)
    store.put("slack:C1", LUMEN)
    client.hset(Keys().chat_settings(), "slack:C2", b"{not json")
    assert store.all() == {"slack:C1": LUMEN}
    assert store.get("slack:C2") is None
    client.close()


# --- the config in force ------------------------------------------------------------------

FILE = parse_config({
    "repos": {"acme/lumen": {"timezone": "Asia/Tokyo"}, "acme/vault": {"private": True}},
    "channels": [{"platform": "slack", "id": "CFILE", "repo": "acme/lumen", "lang": "zh",
                  "schedule": "0 9 * * MON"}],
    "chat": {"repos": ["friends/*"], "private_repos": ["friends/secret"]},
    "server": {"public_url": "https://digest.example.com"},
})


@pytest.mark.parametrize(
    ("repo", "private", "refusal"),
    [
        ("acme/lumen", False, None),  # under [repos]
        ("ACME/Lumen", False, None),  # names ignore case
        ("friends/anything", False, None),  # owner/*
        ("strangers/repo", False, "repo-not-allowed"),
        ("acme/vault", False, "repo-private"),  # private under [repos], not listed
        ("friends/hidden", True, "repo-private"),  # private on GitHub, not listed
        ("friends/secret", True, None),
    ],
)
def test_the_bounds_of_what_may_be_followed(repo: str, private: bool, refusal: str | None
                                            ) -> None:
    assert follow_refusal(FILE, repo, private=private) == refusal


def test_a_chat_made_channel_is_a_channel_of_the_config_in_force() -> None:
    chat = ChatSettings(repos=("friends/app",), lang="en", schedule="30 17 * * FRI")
    config = effective_config(FILE, {"telegram:-1001": chat})
    channel = config.channel("telegram:-1001")
    assert channel is not None
    assert (channel.repo, channel.lang, channel.schedule, channel.timezone) == (
        "friends/app", "en", "30 17 * * FRI", "Asia/Shanghai")
    assert "friends/app" in config.repos and not config.repo("friends/app").private
    # Its report links work as a file repository's do.
    assert report_url(config, "friends/app", "2026-W29") == \
        "https://digest.example.com/reports/friends/app/2026-W29"
    assert report_url(FILE, "friends/app", "2026-W29") is None


def test_a_chat_on_a_file_repository_takes_its_time_zone() -> None:
    config = effective_config(FILE, {"slack:C9": ChatSettings(repos=("acme/lumen",))})
    channel = config.channel("slack:C9")
    assert channel is not None and channel.timezone == "Asia/Tokyo"
    assert channel.schedule == "0 9 * * MON"  # the weekly post's default


def test_a_private_repository_followed_from_chat_gets_signed_links_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRDIGEST_REPORT_SECRET", raising=False)
    chat = ChatSettings(repos=("friends/secret",), private=("friends/secret",))
    config = effective_config(FILE, {"slack:C9": chat})
    assert config.repo("friends/secret").private
    assert report_url(config, "friends/secret", "2026-W29") is None
    monkeypatch.setenv("PRDIGEST_REPORT_SECRET", "s3cret")
    assert "key=" in (report_url(config, "friends/secret", "2026-W29") or "")


def test_repositories_the_bounds_no_longer_allow_are_dropped() -> None:
    chat = ChatSettings(repos=("friends/app", "acme/lumen"))
    tightened = msgspec.structs.replace(FILE, chat=msgspec.structs.replace(FILE.chat, repos=()))
    config = effective_config(tightened, {"slack:C9": chat})
    channel = config.channel("slack:C9")
    assert channel is not None and channel.repositories == ("acme/lumen",)
    gone = effective_config(tightened, {"slack:C8": ChatSettings(repos=("friends/app",))})
    assert gone.channel("slack:C8") is None and "friends/app" not in gone.repos


def test_a_bad_stored_value_falls_back_to_the_default() -> None:
    chat = ChatSettings(repos=("friends/app",), schedule="every day", timezone="Mars/Olympus")
    channel = effective_config(FILE, {"slack:C9": chat}).channel("slack:C9")
    assert channel is not None
    assert (channel.schedule, channel.timezone) == ("0 9 * * MON", "Asia/Shanghai")


def test_a_file_channel_keeps_the_files_settings_unless_chat_may_change_it() -> None:
    chat = ChatSettings(repos=("friends/app",), lang="en",
                        file_values={"lang": "zh"})
    fixed = effective_config(FILE, {"slack:CFILE": chat})
    assert fixed.channel("slack:CFILE") == FILE.channel("slack:CFILE")
    open_file = _file_channels("chat")
    changed = effective_config(open_file, {"slack:CFILE": chat}).channel("slack:CFILE")
    assert changed is not None
    assert (changed.lang, changed.repositories) == ("en", ("acme/lumen", "friends/app"))


def test_the_file_wins_again_once_it_changes_a_setting_chat_changed() -> None:
    chat = ChatSettings(lang="en", schedule="0 10 * * FRI",
                        file_values={"lang": "zh", "schedule": "0 9 * * MON"})
    edited = _file_channels("chat", schedule="0 8 * * TUE")
    channel = effective_config(edited, {"slack:CFILE": chat}).channel("slack:CFILE")
    assert channel is not None
    # The file changed the schedule since chat set it: the file's; the language it did not.
    assert (channel.schedule, channel.lang) == ("0 8 * * TUE", "en")


def _file_channels(mode: str, **channel: str) -> Config:
    data = {
        "repos": {"acme/lumen": {}, "friends/app": {}},
        "channels": [{"platform": "slack", "id": "CFILE", "repo": "acme/lumen", "lang": "zh",
                      "schedule": "0 9 * * MON", **channel}],
        "chat": {"file_channels": mode},
    }
    return parse_config(data)


async def test_another_replicas_change_is_read_at_the_next_refresh() -> None:
    store = InMemoryChatSettings()
    here, there = LiveConfig(FILE, store), LiveConfig(FILE, store)
    store.put("slack:C9", ChatSettings(repos=("friends/app",)))
    here.changed("slack:C9", store.get("slack:C9"))
    assert here.current.channel("slack:C9") is not None
    assert there.current.channel("slack:C9") is None
    await there.refresh()
    assert there.current.channel("slack:C9") is not None
    assert there.origin("slack:C9") == "chat" and there.origin("slack:CFILE") == "file"


async def test_a_store_that_fails_keeps_the_settings_read_last(
        caplog: pytest.LogCaptureFixture) -> None:
    store = InMemoryChatSettings()
    store.put("slack:C9", ChatSettings(repos=("friends/app",)))
    live = LiveConfig(FILE, store)
    await live.refresh()
    store.fail = True
    for _ in range(3):
        await live.refresh()
    assert live.current.channel("slack:C9") is not None
    assert caplog.text.count("chat settings unreadable") == 1


async def test_a_reloaded_file_keeps_the_chats_and_applies_its_bounds_again() -> None:
    store = InMemoryChatSettings()
    store.put("slack:C9", ChatSettings(repos=("friends/app",)))
    live = LiveConfig(FILE, store)
    await live.refresh()
    live.replace_file(msgspec.structs.replace(FILE, chat=msgspec.structs.replace(
        FILE.chat, repos=())))
    assert live.current.channel("slack:C9") is None
    live.replace_file(FILE)
    assert live.current.channel("slack:C9") is not None


async def test_keep_fresh_stops_with_its_event() -> None:
    live = LiveConfig(FILE, InMemoryChatSettings(), refresh_seconds=0.01)
    stop = asyncio.Event()
    task = asyncio.create_task(live.keep_fresh(stop))
    await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, 2)


def test_a_reload_is_described_by_what_changed() -> None:
    after = parse_config({
        "repos": {"acme/lumen": {"timezone": "Asia/Tokyo"}, "acme/vault": {"private": True},
                  "acme/new": {}},
        "channels": [{"platform": "slack", "id": "CFILE", "repo": "acme/lumen", "lang": "zh",
                      "schedule": "0 10 * * FRI"},
                     {"platform": "telegram", "id": "-100", "repo": "acme/new"}],
        "chat": {"repos": ["friends/*"], "private_repos": ["friends/secret"]},
    })
    described = describe_changes(FILE, after)
    assert "slack:CFILE schedule '0 9 * * MON' -> '0 10 * * FRI'" in described
    assert "added telegram:-100" in described and "repository acme/new added" in described
    assert describe_changes(FILE, FILE) == "nothing changed"
