"""A chat not in the config file sets itself up, on Slack, Telegram and Feishu - the real
SDKs against the fakes, the whole service in-process with Redis: the platform says who
the chat's admins are (Slack's workspace admins and the channel's creator, Telegram's
`getChatMember`, Feishu's owner and managers; in a direct chat, its user), the
operator's `[chat]` bounds hold, and every refusal is a reply in the asker's language
that stores nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.store.chat_settings import ChatSettings
from bot.store.redis.chat_settings import RedisChatSettings
from bot.store.redis.client import sync_client
from testkit.fakes.telegram import group_chat, private_chat
from testkit.reliability.harness import Service, service_in_process
from testkit.reliability.world import World, world

CHAT = """
[chat]
repos = ["acme/*"]
"""


@pytest.fixture
def fakes() -> Iterator[World]:
    with world() as started:
        yield started


@pytest_asyncio.fixture(loop_scope="function")
async def service(fakes: World, redis_url: str, tmp_path: Path) -> AsyncIterator[Service]:
    async with service_in_process(fakes, redis_url, tmp_path, extra=CHAT) as running:
        yield running


@pytest.fixture
def stored(redis_url: str) -> Iterator[RedisChatSettings]:
    client = sync_client(redis_url)
    yield RedisChatSettings(client)
    client.close()


def said(answers: list[dict[str, Any]]) -> str:
    return json.dumps(answers, ensure_ascii=False)


def settings_of(stored: RedisChatSettings, chat: str) -> ChatSettings | None:
    return stored.all().get(chat)


# --- Slack -------------------------------------------------------------------------------


async def test_slack_a_channels_admin_sets_it_up(service: Service, stored: RedisChatSettings
                                                 ) -> None:
    slack = service.world.slack
    refused = said(await service.slack("follow acme/lumen", user="U0USER01", channel="CNEW"))
    assert "Only this chat's admins may change its settings" in refused
    assert stored.all() == {}
    slack.workspace_admins.add("U0ADMIN9")
    done = said(await service.slack("follow acme/lumen", user="U0ADMIN9", channel="CNEW"))
    assert "This chat now follows" in done and "acme/lumen" in done
    slack.channel_creators["CNEW"] = "U0CREATOR"
    await service.slack("schedule fri 17:00", user="U0CREATOR", channel="CNEW")
    saved = settings_of(stored, "slack:CNEW")
    assert saved is not None and (saved.repos, saved.schedule) == (("acme/lumen",),
                                                                 "0 17 * * FRI")
    assert [c.path.rsplit("/", 1)[-1] for c in slack.calls("users.info")]
    # The chat now answers like a file channel.
    assert "weekly report" in said(await service.slack("digest last week", channel="CNEW"))


async def test_slack_in_a_direct_message_the_user_is_the_admin(
        service: Service, stored: RedisChatSettings) -> None:
    done = said(await service.slack("关注 acme/lumen", user="U0USER01", channel="D0DIRECT"))
    assert "本群已关注" in done
    assert settings_of(stored, "slack:D0DIRECT") is not None
    assert service.world.slack.calls("users.info") == []  # nobody asked


@pytest.mark.parametrize(("text", "reply"), [
    ("follow strangers/repo", "is not among the repositories chats may follow here"),
    ("关注 strangers/repo", "不在允许群关注的仓库之列"),
    ("follow acme/vault", "is private, and the operator has not allowed it"),
    ("关注 acme/vault", "是私有仓库，运维人员没有允许在群里关注它"),
])
async def test_slack_refuses_what_the_operator_does_not_allow(
        service: Service, stored: RedisChatSettings, text: str, reply: str) -> None:
    service.world.slack.workspace_admins.add("U0ADMIN9")
    assert reply in said(await service.slack(text, user="U0ADMIN9", channel="CNEW"))
    assert stored.all() == {}


# --- Telegram ------------------------------------------------------------------------------


async def test_telegram_a_groups_admin_sets_it_up(service: Service, stored: RedisChatSettings
                                                  ) -> None:
    group = group_chat(-1007770001)
    refused = said(await service.telegram("关注 acme/lumen", chat=group))
    assert "只有本群管理员可以修改设置，没有做任何更改。" in refused
    assert stored.all() == {}
    service.world.telegram.chat_admins["-1007770001"] = {4242}
    done = said(await service.telegram("follow acme/lumen", chat=group))
    assert "This chat now follows" in done
    await service.telegram("/lang zh", chat=group)
    saved = settings_of(stored, "telegram:-1007770001")
    assert saved is not None and saved.lang == "zh"
    assert service.world.telegram.calls("getChatMember")


async def test_telegram_in_a_private_chat_the_user_is_the_admin(
        service: Service, stored: RedisChatSettings) -> None:
    done = said(await service.telegram("follow acme/lumen", chat=private_chat(4242)))
    assert "This chat now follows" in done
    assert settings_of(stored, "telegram:4242") is not None
    assert service.world.telegram.calls("getChatMember") == []


@pytest.mark.parametrize(("text", "reply"), [
    ("follow strangers/repo", "is not among the repositories chats may follow here"),
    ("关注 acme/vault", "是私有仓库"),
])
async def test_telegram_refuses_what_the_operator_does_not_allow(
        service: Service, stored: RedisChatSettings, text: str, reply: str) -> None:
    assert reply in said(await service.telegram(text, chat=private_chat(4242)))
    assert stored.all() == {}


# --- Feishu --------------------------------------------------------------------------------


async def test_feishu_the_groups_owner_sets_it_up(service: Service, stored: RedisChatSettings
                                                  ) -> None:
    refused = said(await service.feishu("follow acme/lumen", chat="oc_newchat01"))
    assert "Only this chat's admins may change its settings" in refused
    assert stored.all() == {}
    service.world.feishu.chat_managers["oc_newchat01"] = ["ou_alice"]
    done = said(await service.feishu("每周一 9 点", chat="oc_newchat01"))
    assert "本群还没有关注仓库" in done  # the schedule needs a repository first
    done = said(await service.feishu("关注 acme/lumen", chat="oc_newchat01"))
    assert "本群已关注" in done
    saved = settings_of(stored, "feishu:oc_newchat01")
    assert saved is not None and saved.lang == "zh"
    assert service.world.feishu.calls("/open-apis/im/v1/chats/")


async def test_feishu_in_a_one_to_one_chat_the_user_is_the_admin(
        service: Service, stored: RedisChatSettings) -> None:
    done = said(await service.feishu("follow acme/lumen", chat="oc_p2pchat01",
                                     chat_type="p2p"))
    assert "This chat now follows" in done
    assert settings_of(stored, "feishu:oc_p2pchat01") is not None


@pytest.mark.parametrize(("text", "reply"), [
    ("关注 strangers/repo", "不在允许群关注的仓库之列"),
    ("follow acme/vault", "is private, and the operator has not allowed it"),
])
async def test_feishu_refuses_what_the_operator_does_not_allow(
        service: Service, stored: RedisChatSettings, text: str, reply: str) -> None:
    assert reply in said(await service.feishu(text, chat="oc_p2pchat01", chat_type="p2p"))
    assert stored.all() == {}


# --- what a chat set up from chat gets ---------------------------------------------------


async def test_a_repository_followed_from_chat_gets_report_pages_and_links(
        service: Service) -> None:
    service.world.github.add_repo("acme/tools", [])
    assert (await service.get("/reports/acme/tools")).status_code == 404
    await service.slack("follow acme/tools", channel="D0TOOLS")
    index = await service.get("/reports/acme/tools")
    assert index.status_code == 200
    digest = said(await service.slack("digest last week", channel="D0TOOLS"))
    assert "/reports/acme/tools/" in digest
    home = await service.get("/")
    assert "acme/tools" not in home.text and "acme/lumen" in home.text
