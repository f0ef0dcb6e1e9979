"""What the merge poller costs GitHub: each merge fetched once however often the list
shows it again (claimed before any fetch), and nothing asked while GitHub rate-limits
the token, on this replica or another."""

from __future__ import annotations

import asyncio

import pytest

from bot.delivery.merges import MergeAnnouncer
from bot.delivery.poller import MergePoller
from bot.github.events import MergedPull
from bot.store.memory import MemoryCoordination
from testkit.poller_world import PollerWorld, poller_world
from testkit.server_support import clear_env


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


async def next_pass(world: PollerWorld) -> None:
    await asyncio.sleep(0.02)  # the per-interval lock of each repository
    await world.poller.poll_once()


async def test_each_merge_is_fetched_once_however_often_the_list_shows_it(
    ) -> None:
    async with poller_world(MemoryCoordination(shared=True), repos=2, pulls_per_repo=8) as world:
        await world.poller.poll_once()  # the start: nothing merged is news yet
        merged = []
        for _ in range(8):
            for repo in world.config.repos:
                merged.append(world.merge(repo))
            await next_pass(world)
        fetches = world.github.count("graphql")
        points = world.points()
        sent = world.notices()
    # One GraphQL fetch (and one point) per merge, where re-fetching each merged PR on
    # every changed list cost 2 x (1 + 2 + ... + 8) = 72.
    assert fetches == len(merged) == 16
    assert points <= 1.1 * len(merged)
    assert sorted(number for _, number in sent) == sorted(merged)


async def test_a_merge_the_webhook_announced_costs_the_poller_no_fetch() -> None:
    async with poller_world(MemoryCoordination(shared=True), repos=1, pulls_per_repo=2) as world:
        await world.poller.poll_once()
        repo = next(iter(world.config.repos))
        number = world.merge(repo)
        pull = world.github.repos[repo].pulls[number]
        webhook = MergeAnnouncer(world.claims, world.poller.merges.notifier)
        # As the webhook names it: the merge commit GitHub sends in both payloads.
        page = await asyncio.to_thread(world.poller.lister.closed, repo)
        told = next(m for m in page.merged if m.pull.number == number)
        assert await webhook.announce(MergedPull(repo, told.pull, told.merge)) is not None
        before = world.github.count("graphql")
        await next_pass(world)
        assert world.github.count("graphql") == before
        assert world.poller.known == 1
        assert world.notices() == [(world.config.channels[0].id, pull.number)]


@pytest.mark.parametrize("kind", ["secondary", "primary"])
async def test_a_rate_limit_stops_every_poll_until_its_window_ends(
    kind: str
) -> None:
    async with poller_world(MemoryCoordination(shared=True), repos=12, pulls_per_repo=1) as world:
        world.github.rate_limit_next(10_000, kind=kind, retry_after=60, reset_in=60,
                                     status=403)
        for _ in range(3):
            await next_pass(world)
        limited = world.list_requests()
        # A second replica (sharing Redis) asks nothing either.
        other = MergePoller(world.config, world.poller.lister, world.claims,
                            world.poller.merges.notifier, interval_seconds=0.01)
        await other.poll_once()
        assert world.list_requests() == limited
    # At most one request per repository in the window (the ones already in flight when
    # the first limited answer came), where every pass used to send one per repository.
    assert limited <= world.poller.concurrency
    assert world.poller.paused >= 3 * 12 - limited
    assert world.poller.paused_until is not None


async def test_the_poller_resumes_when_the_window_ends() -> None:
    async with poller_world(MemoryCoordination(shared=True), repos=3, pulls_per_repo=2,
                            concurrency=1) as world:
        await world.poller.poll_once()
        repo = next(iter(world.config.repos))  # polled first: the limited answer is its
        number = world.merge(repo)
        world.github.rate_limit_next(1, kind="secondary", retry_after=1, status=429)
        await next_pass(world)  # limited: nothing announced, every poll stopped
        assert world.notices() == []
        await asyncio.sleep(1.5)  # the window (Retry-After: 1) ends
        await next_pass(world)
        assert [n for _, n in world.notices()] == [number]
