"""What chat asks GitHub besides a week of PRs: which PRs wait for review now, and
whether a repository a chat wants to follow exists and is private.

The review queue is one search, whatever the number of repositories (a `repo:`
qualifier each): open PRs that are not drafts, neither approved nor sent back for
changes, oldest first - what GitHub's scheduled reminders list. Through GraphQL it asks
for no nested list, so it costs one point; without a token it is one REST search. A
repository is one REST request (`GET /repos/{owner}/{name}`), with or without a token.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from github.GithubException import GithubException
from github.Requester import Requester

from bot.clock import SYSTEM_CLOCK, Clock
from bot.errors import SourceError
from bot.github.budget import Budget
from bot.github.graphql import GraphQLBackend
from bot.github.policy import RequestPolicy
from bot.github.queries import RATE_LIMIT
from bot.source import QueuedPull, RepoFacts, ReviewQueue

QUEUE_SHOWN = 20
"""The oldest PRs a review queue holds (its `total` counts them all)."""


def queue_query(repos: Sequence[str]) -> str:
    """The issue search for the PRs waiting for review in `repos`, oldest first."""
    names = " ".join(f"repo:{name}" for name in repos)
    return (f"{names} is:pr is:open draft:false -review:approved "
            "-review:changes_requested sort:created-asc")


_QUEUE = (
    "query Queue($q: String!) { " + RATE_LIMIT + " search(query: $q, type: ISSUE, first: "
    + str(QUEUE_SHOWN) + ") { issueCount nodes { __typename ... on PullRequest { number "
    "title url createdAt author { __typename login } repository { nameWithOwner } } } } }"
)


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _login(actor: Any) -> str | None:
    if not isinstance(actor, dict) or not actor.get("login"):
        return None
    login = str(actor["login"])
    return f"{login}[bot]" if actor.get("__typename") == "Bot" else login


class Lookups:
    """`GitHubLookups` for a `GitHubSource`: the review queue through its GraphQL backend
    when it has a token (REST's search without one), a repository through REST (one
    request, none of GraphQL's points). `clock` stamps each queue with when GitHub
    answered (the source's)."""

    def __init__(self, requester: Requester, policy: RequestPolicy, budget: Budget, *,
                 graphql: GraphQLBackend | None, clock: Clock = SYSTEM_CLOCK) -> None:
        self.requester = requester
        self.policy = policy
        self.budget = budget
        self.graphql = graphql
        self.clock = clock

    def review_queue(self, repos: Sequence[str]) -> ReviewQueue:
        names = ", ".join(repos)
        with self.budget.fetch(names, "review queue"):
            try:
                pulls, total = self._queue(names, queue_query(repos))
            except _Missing:
                raise SourceError(f"GitHub cannot search {names}") from None
        return ReviewQueue(pulls=tuple(pulls[:QUEUE_SHOWN]), total=max(total, len(pulls)),
                           fetched_at=self.clock.now().replace(microsecond=0))

    def _queue(self, names: str, query: str) -> tuple[list[QueuedPull], int]:
        """The search's PRs (the oldest `QUEUE_SHOWN`) and how many it found."""
        if self.graphql is not None:
            found = self.graphql.query(names, _QUEUE, {"q": query}).get("search") or {}
            nodes = [n for n in found.get("nodes") or []
                     if n and n.get("__typename") == "PullRequest"]
            return [QueuedPull(
                repository=str((n.get("repository") or {}).get("nameWithOwner") or ""),
                number=int(n["number"]), title=str(n["title"]), url=str(n["url"]),
                author=_login(n.get("author")), created_at=_time(n.get("createdAt")),
            ) for n in nodes], int(found.get("issueCount") or 0)
        data = self._rest("/search/issues", {"q": query, "advanced_search": "true",
                                             "per_page": QUEUE_SHOWN})
        items = [i for i in data.get("items") or [] if i.get("pull_request")]
        return [QueuedPull(
            repository=str(i.get("repository_url", "")).split("/repos/", 1)[-1],
            number=int(i["number"]), title=str(i["title"]), url=str(i["html_url"]),
            author=(i.get("user") or {}).get("login"), created_at=_time(i.get("created_at")),
        ) for i in items], int(data.get("total_count") or 0)

    def repository(self, repo: str) -> RepoFacts | None:
        owner, _, name = repo.partition("/")
        try:
            data = self._rest(f"/repos/{owner}/{name}")
        except _Missing:
            return None
        return RepoFacts(name=str(data.get("full_name") or repo),
                         private=bool(data.get("private")))

    def _rest(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            _, data = self.policy.call(
                lambda: self.requester.requestJsonAndCheck("GET", path, parameters=params))
        except GithubException as exc:
            if exc.status in (404, 422):
                raise _Missing() from None
            raise SourceError(f"GitHub request failed ({exc.status} {exc.message})") from None
        return dict(data or {})


class _Missing(Exception):
    """GitHub has no such repository, or will not say (a private one without access)."""
