"""What chat asks GitHub itself, on the fake GitHub through the real PyGithub: the PRs
waiting for review now - one search for a chat's repositories (one GraphQL point),
oldest first, kept in Redis for `chat.pending_minutes` so a chat asking again, on any
replica, costs nothing more - and whether a repository a chat follows exists and is
private."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import parse_config
from bot.digests import Digests
from bot.github.lookups import queue_query
from bot.github.source import GitHubSource
from bot.models import PullRequest, Review
from bot.render import render_reply
from bot.source import SnapshotSource
from bot.store.keys import Keys
from bot.store.redis.client import sync_client
from bot.store.redis.review_queues import RedisReviewQueueStore
from bot.store.review_queues import ReviewQueues
from testkit.chat_week import SNAPSHOT
from testkit.clock import VirtualClock
from testkit.fakes.github import FakeGitHub

TOKEN = "ghp_queue_token"
NOW = datetime(2026, 7, 22, 4, 0, tzinfo=UTC)
CONFIG = parse_config({
    "repos": {"acme/lumen": {}, "acme/tools": {}},
    "channels": [{"platform": "slack", "id": "C1", "repo": "acme/lumen", "lang": "en"},
                 {"platform": "slack", "id": "C2", "repos": ["acme/lumen", "acme/tools"]}],
})


def opened(number: int, day: int, **fields: object) -> PullRequest:
    return PullRequest(number=number, title=f"PR {number}", state="open", author=f"dev{number}",
                       url=f"https://github.com/acme/lumen/pull/{number}",
                       created_at=datetime(2026, 7, day, 8, tzinfo=UTC),
                       updated_at=datetime(2026, 7, day, 9, tzinfo=UTC), **fields)  # type: ignore[arg-type]


def review(state: str, author: str = "lead") -> Review:
    return Review(author=author, state=state,  # type: ignore[arg-type]
                  submitted_at=datetime(2026, 7, 20, tzinfo=UTC))


LUMEN = [
    opened(11, 10),  # the oldest waiting
    opened(12, 12, draft=True),  # a draft: not waiting
    opened(13, 14, reviews=(review("APPROVED"),)),  # approved: waiting on its author
    opened(14, 15, reviews=(review("CHANGES_REQUESTED"),)),  # sent back
    opened(15, 16, reviews=(review("COMMENTED"),)),  # commented on: still waiting
    opened(16, 18, reviews=(review("CHANGES_REQUESTED"), review("APPROVED", "other"))),
    PullRequest(number=17, title="merged", state="merged", url="u",
                merged_at=datetime(2026, 7, 19, tzinfo=UTC)),
    opened(18, 20),
]
TOOLS = [opened(21, 11)]


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        server.add_repo("acme/lumen", LUMEN)
        server.add_repo("acme/tools", TOOLS)
        yield server


def github(fake: FakeGitHub, token: str | None = TOKEN) -> GitHubSource:
    return GitHubSource(CONFIG, token=token, base_url=fake.base_url, clock=VirtualClock(NOW))


def test_the_query_asks_for_open_prs_nobody_approved_or_sent_back() -> None:
    assert queue_query(["acme/lumen", "acme/tools"]) == (
        "repo:acme/lumen repo:acme/tools is:pr is:open draft:false -review:approved "
        "-review:changes_requested sort:created-asc")


@pytest.mark.parametrize("token", [TOKEN, None], ids=["graphql", "rest"])
def test_one_search_gives_the_waiting_prs_oldest_first(fake: FakeGitHub, token: str | None
                                                       ) -> None:
    queue = github(fake, token).review_queue(["acme/lumen", "acme/tools"])
    assert [(p.repository, p.number) for p in queue.pulls] == [
        ("acme/lumen", 11), ("acme/tools", 21), ("acme/lumen", 15), ("acme/lumen", 18)]
    assert queue.total == 4 and queue.pulls[0].author == "dev11"
    assert fake.count() == 1


@pytest.mark.parametrize("token", [TOKEN, None], ids=["token", "no token"])
def test_a_repository_is_looked_up_with_its_visibility(fake: FakeGitHub, token: str | None
                                                       ) -> None:
    fake.add_repo("acme/secret", [], private=True)
    source = github(fake, token)
    found = source.repository("ACME/Lumen")
    assert found is not None and (found.name, found.private) == ("acme/lumen", False)
    assert source.repository("acme/nothing") is None
    secret = source.repository("acme/secret")
    # Without a token GitHub does not show a private repository at all.
    assert (secret is not None and secret.private) if token else secret is None
    assert fake.count("graphql") == 0  # REST: none of GraphQL's points


def test_the_search_costs_one_point(fake: FakeGitHub) -> None:
    source = github(fake)
    source.review_queue(["acme/lumen"])
    assert fake.points.costs == [1] and source.budget.spent == 1


@pytest.fixture
def queues(redis_url: str) -> Iterator[ReviewQueues]:
    client = sync_client(redis_url)
    yield ReviewQueues(RedisReviewQueueStore(client))
    client.close()


def handler(fake: FakeGitHub, queues: ReviewQueues, **options: object) -> CommandHandler:
    digests = Digests(CONFIG, SnapshotSource(SNAPSHOT), clock=HeldClock(NOW))
    return CommandHandler(digests, lookups=github(fake), queues=queues, **options)  # type: ignore[arg-type]


async def test_a_chat_asking_again_within_the_window_costs_nothing(
        fake: FakeGitHub, redis_url: str) -> None:
    first = ReviewQueues(RedisReviewQueueStore(sync_client(redis_url)))
    # Another replica, the same Redis.
    second = ReviewQueues(RedisReviewQueueStore(sync_client(redis_url)))
    here, there = handler(fake, first), handler(fake, second)
    channel = CONFIG.channels[0]
    replies = [await here.handle(parse_command("what is waiting for review"), channel=channel),
               await there.handle(parse_command("待 review 的 PR"), channel=channel),
               await here.handle(parse_command("pending"), channel=channel)]
    assert fake.count("graphql") == 1
    assert [r.kind for r in replies] == ["answer"] * 3
    answer = replies[0].answer
    assert answer is not None and [p.number for p in answer.pulls] == [11, 15, 18]
    assert answer.pulls[0].waiting_days == 11  # opened 07-10 08:00, asked 07-22 04:00 UTC
    text = render_reply(replies[0], "text")
    assert "3 PRs are waiting for review, oldest first" in text
    assert "#11 PR 11 — by dev11, open 11 days" in text
    assert "3 个 PR 在等待评审（最早的在前）" in render_reply(replies[1], "text")
    # Once the window is over, the next question asks GitHub again.
    client = sync_client(redis_url)
    client.delete(Keys().pending_reviews(["acme/lumen"]))
    await here.handle(parse_command("waiting for review"), channel=channel)
    assert fake.count("graphql") == 2
    client.close()


async def test_a_chat_of_several_repositories_asks_one_search(
        fake: FakeGitHub, queues: ReviewQueues) -> None:
    reply = await handler(fake, queues).handle(parse_command("waiting for review"),
                                               channel=CONFIG.channels[1])
    assert reply.answer is not None
    assert [(p.repository, p.number) for p in reply.answer.pulls][:2] == [
        ("acme/lumen", 11), ("acme/tools", 21)]
    assert fake.count("graphql") == 1
    assert "acme/tools#21" in render_reply(reply, "text")


async def test_low_points_keep_the_search_for_the_weekly_posts(
        fake: FakeGitHub, queues: ReviewQueues) -> None:
    reply = await handler(fake, queues, points_short=lambda points: True).handle(
        parse_command("待 review 的 PR"), channel=CONFIG.channels[0])
    assert (reply.kind, reply.error, reply.lang) == ("error", "github-points-low", "zh")
    assert fake.count() == 0


async def test_no_pr_waiting_says_so(fake: FakeGitHub, queues: ReviewQueues) -> None:
    fake.add_repo("acme/lumen", [opened(12, 12, draft=True)])
    reply = await handler(fake, queues).handle(parse_command("waiting for review"),
                                               channel=CONFIG.channels[0])
    assert "No PR is waiting for review in acme/lumen." in render_reply(reply, "text")
