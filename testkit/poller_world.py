"""An organisation for the merge poller: repositories on the fake GitHub (which charges
GitHub's GraphQL points and serves the closed-PR list with ETags), one channel per
repository following a topic every PR has, and the poller wired as the server wires
it - its own lister on the GitHub source, notices fetching each PR through GraphQL.
Tests and `bench.poller` share it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import msgspec

from adapters.poster import AdapterNotices
from bot.config import ChannelConfig, Config, GitHubConfig, RepoConfig, TopicRule
from bot.delivery.notices import MergeNotifier
from bot.delivery.poller import MergePoller
from bot.digests import Digests
from bot.github.budget import Budget
from bot.github.closed import poll_lister
from bot.github.source import GitHubSource
from bot.models import PullRequest
from bot.store.cache import CachedSource
from bot.store.claims import Claims
from bot.store.coordination import Coordination
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week
from testkit.server_support import RecordingAdapter, recording_adapters

TOKEN = "ghp_poller_token"
TOPIC = "code"
"""The topic every channel follows: any changed file matches it."""


def org_config(repos: int, *, concurrency: int = 4) -> Config:
    """`repos` repositories `org/repo<i>`, each with one Slack channel following TOPIC."""
    names = [f"org/repo{i}" for i in range(repos)]
    rule = {TOPIC: TopicRule(paths=("**",))}
    return Config(
        repos={name: RepoConfig(timezone="UTC", topics=rule) for name in names},
        channels=tuple(ChannelConfig(platform="slack", id=f"C{i:05d}", repo=name, lang="en",
                                     timezone="UTC", topics=(TOPIC,))
                       for i, name in enumerate(names)),
        github=GitHubConfig(poll_concurrency=concurrency),
    )


def open_pulls(repo: str, count: int, seed: int) -> list[PullRequest]:
    """`count` PRs of `repo`, all open: merged one by one with `PollerWorld.merge`."""
    made = build_week(repo, count=count, seed=seed, overflow=None, decoys=0)
    return [msgspec.structs.replace(p, state="open", merged_at=None, closed_at=None)
            for p in made]


@dataclass
class PollerWorld:
    """The fake GitHub, the config, and the poller with what it sends through."""

    github: FakeGitHub
    config: Config
    poller: MergePoller
    source: GitHubSource
    adapters: dict[str, RecordingAdapter]
    claims: Claims
    waiting: dict[str, list[int]] = field(default_factory=dict)

    def merge(self, repo: str) -> int:
        """Merge the repository's next open PR now (on GitHub); its number."""
        number = self.waiting[repo].pop(0)
        # Whole seconds, as GitHub gives them, never before the poller started.
        moment = (datetime.now(UTC) + timedelta(seconds=1)).replace(microsecond=0)
        self.github.put_pull(repo, msgspec.structs.replace(
            self.github.repos[repo].pulls[number], state="merged", merged_at=moment,
            closed_at=moment, updated_at=moment))
        return number

    def notices(self) -> list[tuple[str, int]]:
        """(channel id, PR number) of every notice sent, in order."""
        return [(channel, reply.pull.number) for channel, reply in self.adapters["slack"].replies
                if reply.pull is not None]

    def points(self) -> int:
        return self.github.points.spent()

    def list_requests(self) -> int:
        return self.github.count("rest")


@contextlib.asynccontextmanager
async def poller_world(port: Coordination, *, repos: int, pulls_per_repo: int,
                       latency: float = 0.0, concurrency: int = 4) -> AsyncIterator[PollerWorld]:
    """The world, started, its poller's claims on `port`; everything closed afterwards."""
    config = org_config(repos, concurrency=concurrency)
    with FakeGitHub(token=TOKEN, latency=latency) as github:
        waiting = {}
        for index, name in enumerate(config.repos):
            pulls = open_pulls(name, pulls_per_repo, seed=index)
            github.add_repo(name, pulls)
            waiting[name] = [p.number for p in pulls]
        source = GitHubSource(config, token=TOKEN, base_url=github.base_url, budget=Budget())
        claims = Claims(port)
        adapters = recording_adapters()
        notifier = MergeNotifier(Digests(config, CachedSource(source, None, config)), claims,
                                 AdapterNotices(adapters))
        poller = MergePoller(config, poll_lister(source), claims, notifier,
                             interval_seconds=0.01)
        try:
            yield PollerWorld(github=github, config=config, poller=poller, source=source,
                              adapters=adapters, claims=claims, waiting=waiting)
        finally:
            poller.close()
            source.close()
