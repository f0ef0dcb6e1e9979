"""The weekly post is in each channel's chat form: a compact channel gets the compact
digest, a full one the full digest, from one digest built for both."""

from __future__ import annotations

from typing import Any

from bot.config import ChannelConfig
from bot.models import Digest, Snapshot
from bot.render import render_digest
from bot.render.chat import visible_length
from testkit.clock import VirtualClock
from testkit.coordination import in_memory
from testkit.schedule import (
    SHANGHAI_MONDAY_9,
    CountingSource,
    FakePlatforms,
    FakePoster,
    channel,
    make_config,
    scheduler,
)


class RecordingPoster(FakePoster):
    """Keeps the digest each channel was sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: dict[str, Digest] = {}

    async def post_digest(self, channel: ChannelConfig, digest: Digest, *,
                          delivery_key: str) -> list[str]:
        self.sent[channel.key] = digest
        return await super().post_digest(channel, digest, delivery_key=delivery_key)


async def test_a_compact_channel_is_posted_the_compact_digest(
        snapshot: Snapshot) -> None:
    config = make_config([channel("slack", "C1") | {"style": "compact", "people": True},
                          channel("telegram", "-100")])
    clock = VirtualClock(SHANGHAI_MONDAY_9)
    poster = RecordingPoster(FakePlatforms(clock), "r1")
    async with in_memory(clock) as port:
        one = scheduler(config, CountingSource(snapshot), port, poster, clock)
        await one.tick()
    assert one.stats.digest_builds == 1  # the same digest, shown two ways
    compact, full = poster.sent["slack:C1"], poster.sent["telegram:-100"]
    assert (compact.chat_form.style, compact.chat_form.people) == ("compact", True)
    assert (full.chat_form.style, full.chat_form.people) == ("full", False)
    assert visible_length(render_digest(compact, "text")) <= 800
    assert visible_length(render_digest(full, "text")) > 1000
