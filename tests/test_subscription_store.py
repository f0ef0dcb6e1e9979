"""Subscriptions in Redis: topics added and removed from chat, kept across restarts, changed
only by a channel's admins."""

from __future__ import annotations

from typing import Any

import pytest

from bot.models import Command, Reply
from bot.render import render_reply
from bot.source import SnapshotSource
from bot.store.redis.client import sync_client
from bot.store.redis.subscriptions import RedisSubscriptionStore
from bot.web.app import create_app
from testkit.server_support import (
    SLACK,
    TELEGRAM,
    clear_env,
    clock,
    example_config,
    example_snapshot,
    recording_adapters,
    services_of,
    serving,
)
from testkit.server_support import (
    example_channel as channel,
)

REDIS_TOPOLOGIES = ("single", "cluster")
"""Each Redis test here runs on one server and on a real Redis Cluster."""


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


# --- the store ----------------------------------------------------------------------------


def test_store_adds_removes_and_lists_topics(redis_url: str) -> None:
    store = RedisSubscriptionStore(sync_client(redis_url))
    assert store.topics(SLACK) == set()
    store.add(SLACK, ["ckpt", "trainer"])
    store.add(SLACK, ["ckpt"])
    store.remove(SLACK, ["trainer", "never-there"])
    store.add(SLACK, [])
    assert store.topics(SLACK) == {"ckpt"}
    assert store.topics(TELEGRAM) == set()


async def ask(app: Any, key: str, kind: str, *topics: str, user: str = "U0ADMIN1",
              week: str | None = None) -> Reply:
    services = services_of(app)
    command = Command(kind=kind, lang="en", topics=topics, week=week,  # type: ignore[arg-type]
                      text=f"{kind} {' '.join(topics)}".strip())
    return await services.process.handler.handle(command, channel=channel(key), user=user)


async def test_subscriptions_survive_a_restart(redis_url: str) -> None:
    """Subscribe through one app, stop it; a new app on the same Redis still knows."""
    first = create_app(example_config(), redis_url=redis_url,
                       source=SnapshotSource(example_snapshot()), clock=clock(), background=False,
                       adapters=recording_adapters())
    async with serving(first):
        reply = await ask(first, SLACK, "subscribe", "ckpt")
    assert reply.kind == "subscribed", reply
    second = create_app(example_config(), redis_url=redis_url,
                        source=SnapshotSource(example_snapshot()), clock=clock(), background=False,
                        adapters=recording_adapters())
    async with serving(second):
        topics = await ask(second, SLACK, "topics")
        digest = await ask(second, SLACK, "digest", week="last")
    assert topics.topics == ("npu", "rollout", "ckpt")
    assert "ckpt" in render_reply(topics, "text")
    # The channel's topics, the subscribed one included, come first in its digest:
    # `ckpt` is counted as checkpoint there, one topic however its PRs spell it.
    assert digest.digest is not None
    assert [t.name for t in digest.digest.topics[:3]] == ["npu", "rollout", "checkpoint"]


async def test_only_admins_change_a_channels_topics(redis_url: str) -> None:
    app = create_app(example_config(), redis_url=redis_url,
                     source=SnapshotSource(example_snapshot()), clock=clock(), background=False,
                     adapters=recording_adapters())
    async with serving(app):
        refused = await ask(app, SLACK, "subscribe", "ckpt", user="U_SOMEONE")
        allowed = await ask(app, TELEGRAM, "subscribe", "ckpt", user="anyone")
    assert refused.kind == "error" and refused.error == "not-admin"
    assert allowed.kind == "subscribed"  # the Telegram channel names no admins
    store = RedisSubscriptionStore(sync_client(redis_url))
    assert store.topics(SLACK) == set()
    assert store.topics(TELEGRAM) == {"ckpt"}
