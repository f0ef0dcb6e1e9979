"""A chat not in the config file sets itself up on two `prdigest serve` replicas sharing
one Redis: it follows a repository and sets its weekly schedule on one replica; the
other answers its `digest`; its scheduled post goes out once; a merged PR on a topic it
follows is announced there once, whichever replicas the GitHub delivery reaches."""

from __future__ import annotations

import contextlib
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.store.redis.chat_settings import RedisChatSettings
from bot.store.redis.client import sync_client
from testkit.reliability.names import REPO
from testkit.reliability.notice_kills import NEVER_DUE, npu_pulls
from testkit.reliability.replicas import Replica, Replicas, merge_delivery
from testkit.reliability.slash import ask_slack, wait_for
from testkit.reliability.world import World, config_text, world

CHAT = "CSELF0001"  # in no [[channels]] of the file
ADMIN = "U0ADMIN9"
BOUNDS = """
[chat]
repos = ["acme/*"]
"""


def ask(fakes: World, replica: Replica, text: str, *, user: str = ADMIN) -> str:
    """A signed `/prdigest` slash command in the chat, to one replica."""
    return ask_slack(fakes, replica.url, text, channel=CHAT, user=user)


def posted_to_chat(fakes: World) -> list[dict[str, Any]]:
    return [p for p in fakes.slack.posted() if p.get("channel") == CHAT]


def test_a_chat_set_up_on_one_replica_is_served_by_both_once(
        redis_url: str, tmp_path: Path) -> None:
    notice_pull = npu_pulls(1, first=2301)[0]
    with contextlib.ExitStack() as stack:
        fakes = stack.enter_context(world(pulls=[notice_pull]))
        fakes.slack.workspace_admins.add(ADMIN)
        replicas = Replicas(stack, fakes, redis_url, tmp_path, 2,
                            lambda urls: config_text(urls, schedule=NEVER_DUE, extra=BOUNDS))
        replicas.start()
        first, second = replicas[0], replicas[1]

        # Refused on the first replica, nothing stored: an owner outside the allowlist, a
        # private repository not listed, a person who is not an admin of the chat.
        store = RedisChatSettings(sync_client(redis_url))
        assert "is not among the repositories chats may follow" in ask(
            fakes, first, "follow strangers/tool")
        assert "是私有仓库，运维人员没有允许在群里关注它" in ask(fakes, first, "关注 acme/vault")
        assert "Only this chat's admins may change its settings" in ask(
            fakes, first, "follow acme/lumen", user="U0USER01")
        assert store.all() == {}

        # Set up from chat on the first replica: a repository, a topic, a schedule that
        # fired two minutes ago (in UTC), so the weekly post is due at once.
        assert "This chat now follows" in ask(fakes, first, "follow acme/lumen")
        assert "The time zone is changed." in ask(fakes, first, "timezone UTC")
        assert "Subscribed to `npu`" in ask(fakes, first, "subscribe npu")
        fired = datetime.now(UTC) - timedelta(minutes=2)
        weekday = fired.strftime("%a").lower()
        assert "schedule is changed" in ask(
            fakes, first, f"schedule {weekday} {fired:%H:%M}")
        saved = store.all()[f"slack:{CHAT}"]
        assert saved.repos == (REPO,) and saved.timezone == "UTC"

        # The other replica answers the chat as a channel of its own.
        assert "weekly report" in ask(fakes, second, "digest last week")
        assert "acme/lumen" in ask(fakes, second, "settings")

        # The scheduled post: exactly once, whichever replica's pass found it due.
        first_post = wait_for(lambda: posted_to_chat(fakes), 90)
        time.sleep(5)  # both replicas poll every second: five more passes each
        heads = [p for p in posted_to_chat(fakes) if p.get("text") == first_post[0]["text"]]
        assert len(heads) == 1, posted_to_chat(fakes)

        # A merged NPU PR, delivered to both replicas: one notice in the chat.
        delivery = merge_delivery(notice_pull, REPO)
        assert {first.deliver(delivery), second.deliver(delivery)} <= {200, 202}

        def notices() -> list[dict[str, Any]]:
            return [p for p in posted_to_chat(fakes)
                    if f"/pull/{notice_pull.number}" in json.dumps(p)]

        wait_for(notices, 60)
        time.sleep(3)
        assert len(notices()) == 1, notices()
        logs = replicas.logs()
        assert "Traceback" not in logs
