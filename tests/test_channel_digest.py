"""A channel gets one digest, whoever asks for it: `prdigest post`, the weekly schedule and
`digest` in chat give the same one (the topics it subscribed to in chat after its
configured ones), and the report page gives the repository's week as a channel without
topics gets it. Each process builds one `Digests` and hands it to all of them."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import msgspec

from bot.chat.grammar import parse_command
from bot.cli.post import post_now
from bot.clock import HeldClock
from bot.config import Config, parse_config
from bot.models import ChatForm, Digest
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.redis.client import sync_client
from bot.store.redis.subscriptions import RedisSubscriptionStore
from bot.web.app import app_for
from bot.web.services import build_services
from testkit import EXAMPLES
from testkit.schedule import tick_at
from testkit.server_support import RecordingAdapter

REPO = "acme/lumen"
WEEK = "2026-W29"
SNAPSHOT = EXAMPLES / "snapshot.json"
FOCUSED = "slack:C0FOCUS"
PLAIN = "slack:C0PLAIN"
# The channels' Monday 09:00 in Shanghai, when the schedule posts W29.
MONDAY_MORNING = datetime(2026, 7, 20, 1, 0, tzinfo=UTC)


def _config() -> Config:
    channel = {"platform": "slack", "repo": REPO, "lang": "en", "schedule": "0 9 * * MON",
               "timezone": "Asia/Shanghai"}
    return parse_config({
        "repos": {REPO: {"timezone": "Asia/Shanghai",
                         "topics": {"npu": {"keywords": ["npu", "ascend"]}}}},
        "channels": [dict(channel, id="C0FOCUS", topics=["npu"]), dict(channel, id="C0PLAIN")],
        "server": {"public_url": "http://localhost:8080"},
    })


def _subscribe(redis_url: str, channel: str, *topics: str) -> None:
    client = sync_client(redis_url)
    try:
        RedisSubscriptionStore(client).add(channel, topics)
    finally:
        client.close()


async def _posted(config: Config, channel: str, redis_url: str, *, force: bool = False
                  ) -> Digest:
    catcher = RecordingAdapter("slack")
    result = await post_now(config, REPO, WEEK, channel, snapshots=[SNAPSHOT], adapter=catcher,
                            redis_url=redis_url, force=force)
    assert result.status == "posted", result.detail
    [(posted_to, digest)] = catcher.digests
    assert posted_to == channel.split(":")[1]
    return digest


def _names(digest: Digest) -> list[str]:
    return [topic.name for topic in digest.topics]


async def test_post_puts_the_topics_subscribed_in_chat_after_the_configured_ones(
        redis_url: str) -> None:
    _subscribe(redis_url, FOCUSED, "ci")
    digest = await _posted(_config(), FOCUSED, redis_url)
    # ci has 2 PRs this week, rollout 5: by count alone ci would come fifth.
    assert _names(digest)[:3] == ["npu", "ci", "rollout"]


async def test_post_the_schedule_chat_and_the_report_page_give_a_channel_one_digest(
        redis_url: str) -> None:
    config = _config()
    _subscribe(redis_url, FOCUSED, "ci")
    catcher = RecordingAdapter("slack")
    services = build_services(config, redis_url=redis_url,
                              source=SnapshotSource(read_snapshot(SNAPSHOT)),
                              adapters={"slack": catcher}, clock=HeldClock(MONDAY_MORNING),
                              background=False)
    try:
        assert services.process.scheduler is not None
        assert services.process.handler.digests is services.process.digests
        assert services.process.scheduler.digests is services.process.digests
        assert services.process.notifier.digests is services.process.digests
        results = await tick_at(services.process.scheduler, MONDAY_MORNING)
        assert sorted(r.status for r in results) == ["posted", "posted"]
        scheduled = {f"slack:{channel_id}": digest for channel_id, digest in catcher.digests}

        asked = await services.process.handler.handle(parse_command(f"digest {WEEK}", lang="en"),
                                              channel=config.channel(FOCUSED), user="U1")
        assert asked.kind == "digest" and asked.digest is not None
        # The schedule posted this week already; `post --force` builds it again, in a
        # process of its own.
        posted = await _posted(config, FOCUSED, redis_url, force=True)

        assert _names(scheduled[FOCUSED])[:2] == ["npu", "ci"]
        assert posted == scheduled[FOCUSED]
        assert asked.digest == scheduled[FOCUSED]

        transport = httpx.ASGITransport(app=app_for(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://prdigest") as web:
            page = await web.get(f"/reports/{REPO}/{WEEK}?lang=en")
        assert page.status_code == 200
        # The page is built once and kept: what it showed is what the cache now holds.
        reported = await services.process.digests.report(REPO, WEEK, "en")
        plain = scheduled[PLAIN]
        assert plain.report_url is not None and plain.report_url.endswith(f"/{WEEK}?lang=en")
        assert reported == msgspec.structs.replace(plain, report_url=None, chat_form=ChatForm())
        assert all(f"#{pull.number}" in page.text for pull in reported.key_pulls)
    finally:
        await services.stop()
