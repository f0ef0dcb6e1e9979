"""Muting a channel's merged-PR notices through the whole service: a signed Slack slash
command from the channel's admin (the real SDK against the fake Slack, Redis behind),
refused for anyone else; a signed GitHub delivery of a merge then reaches no one in the
muted channel, and the first merge after the mute's end does."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytest_asyncio

from bot.clock import HeldClock
from testkit.reliability.harness import Service, service_in_process
from testkit.reliability.hostile import hostile_pull
from testkit.reliability.names import REPO, SLACK_ADMIN, SLACK_CHANNEL
from testkit.reliability.world import World, world
from testkit.server_support import merged_event

SLACK_KEY = f"slack:{SLACK_CHANNEL}"


@pytest.fixture
def fakes() -> Iterator[World]:
    with world() as started:
        yield started


@pytest_asyncio.fixture(loop_scope="function")
async def service(fakes: World, redis_url: str, tmp_path: Path) -> AsyncIterator[Service]:
    async with service_in_process(fakes, redis_url, tmp_path) as running:
        yield running


def said(answers: list[dict[str, Any]]) -> str:
    return json.dumps(answers, ensure_ascii=False)


async def test_a_slack_admin_mutes_the_channels_notices_for_a_day(service: Service) -> None:
    clock = service.services.process.clock
    assert isinstance(clock, HeldClock)
    assert await service.slack("subscribe rollout", user=SLACK_ADMIN)

    refused = said(await service.slack("mute 1d", user="U0USER01"))
    assert "Only this chat's admins may change its settings" in refused
    bad = said(await service.slack("mute 999 years", user=SLACK_ADMIN))
    assert "from an hour to 90 days" in bad
    muted = said(await service.slack("mute 1d", user=SLACK_ADMIN))
    assert "Merged-PR notices are muted until" in muted
    assert "muted until" in said(await service.slack("settings"))

    first = hostile_pull()  # [rollout], merged
    answer = await service.github(merged_event(first, REPO))
    assert answer.status_code == 200, answer.text
    assert SLACK_KEY not in answer.json()["notified"]

    clock.advance(timedelta(days=1, minutes=1))
    second = msgspec.structs.replace(first, number=first.number + 1,
                                     url=first.url.rsplit("/", 1)[0] + f"/{first.number + 1}")
    answer = await service.github(merged_event(second, REPO))
    assert answer.status_code == 200, answer.text
    assert SLACK_KEY in answer.json()["notified"]
    # Told again after the end, the muted merge is not announced.
    again = await service.github(merged_event(first, REPO))
    assert SLACK_KEY not in again.json().get("notified", [])
