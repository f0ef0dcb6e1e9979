"""GitHub points of "what is waiting for review": chats asking again and again within
`chat.pending_minutes`, on two replicas sharing a real redis-server, against the fake
GitHub (which charges GitHub's documented formula).

Each chat's repositories are searched once per window, whatever the replica or the
number of questions; a search asks for no nested list, so it costs one point.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime

from bot.config import Config, RepoConfig
from bot.github.source import GitHubSource
from bot.models import PullRequest
from bot.store.redis.client import sync_client
from bot.store.redis.review_queues import RedisReviewQueueStore
from bot.store.review_queues import ReviewQueues
from testkit.fakes.github import FakeGitHub
from testkit.redis_server import private_redis

TOKEN = "ghp_bench_token"
TTL_SECONDS = 600


def _open(repo: str, number: int) -> PullRequest:
    moment = datetime(2026, 7, 1 + number % 20, tzinfo=UTC)
    return PullRequest(number=number, title=f"PR {number}", state="open",
                       url=f"https://github.com/{repo}/pull/{number}", author="dev",
                       created_at=moment, updated_at=moment)


def queue_rows(chats: int = 20, questions: int = 10) -> list[str]:
    """Lines of the table: per chat shape, GitHub requests and points for `questions`
    questions of each of `chats` chats, spread over two replicas."""
    lines = [f"Review queue: {chats} chats asking {questions} times each within the "
             f"{TTL_SECONDS // 60}-minute window, over two replicas sharing Redis",
             f"{'chat follows':<22} {'questions':>9} {'requests':>8} {'points':>6} "
             f"{'points/question':>15}  target"]
    for width in (1, 3):
        repos = [f"acme/r{index}" for index in range(chats * width)]
        config = Config(repos={name: RepoConfig() for name in repos})
        with FakeGitHub(token=TOKEN) as fake, private_redis() as url:
            for name in repos:
                fake.add_repo(name, [_open(name, n) for n in range(1, 26)])
            source = GitHubSource(config, token=TOKEN, base_url=fake.base_url)
            replicas = [ReviewQueues(RedisReviewQueueStore(sync_client(url))) for _ in range(2)]
            asked = 0
            for chat in range(chats):
                followed = repos[chat * width:(chat + 1) * width]
                for question in range(questions):
                    replicas[question % 2].queue(
                        followed, functools.partial(source.review_queue, followed),
                        ttl_seconds=TTL_SECONDS)
                    asked += 1
            points = sum(fake.points.costs)
            source.close()
            lines.append(f"{f'{width} repositor' + ('y' if width == 1 else 'ies'):<22} "
                         f"{asked:>9} {fake.count('graphql'):>8} {points:>6} "
                         f"{points / asked:>15.2f}  1 request per chat per window")
    return lines
