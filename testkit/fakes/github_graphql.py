"""GraphQL resolvers of the fake GitHub: PRs, review threads, files and checks in
GitHub's node shapes, connections paged by `first`/`after`."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from graphql import GraphQLError

from bot.models import PullRequest, ReviewThread
from testkit.fakes.github_search import review_decision
from testkit.fakes.github_shapes import (
    CHANGE_TYPE,
    ROLLUP,
    SEARCH_INVALID,
    FakeRepo,
    cursor,
    cursor_index,
    iso,
    object_sha,
)

if TYPE_CHECKING:
    from testkit.fakes.github import FakeGitHub
    from testkit.fakes.github_points import Points


def association(pull: PullRequest) -> str | None:
    """The author's association as served: null where the fixture has none."""
    return pull.author_association if isinstance(pull.author_association, str) else None


def _actor(login: str | None) -> dict[str, Any] | None:
    """GraphQL names an app account `name` (type Bot) where REST says `name[bot]`;
    fixtures use REST's spelling."""
    if login is None:
        return None
    kind = "Bot" if login.endswith("[bot]") else "User"
    return {"__typename": kind, "id": f"U_{login}", "login": login.removesuffix("[bot]"),
            "url": f"https://github.com/{login}"}


class _Connection:
    """first/after/last/before over a list, as GitHub paginates connections."""

    def __init__(self, fake: FakeGitHub, name: str) -> None:
        self.fake = fake
        self.name = name

    def __call__(self, items: Sequence[Any], args: dict[str, Any]) -> dict[str, Any]:
        first, last = args.get("first"), args.get("last")
        if first is None and last is None:
            raise GraphQLError(
                f"You must provide a `first` or `last` value to properly paginate the "
                f"`{self.name}` connection.")
        limit = first if first is not None else last
        if limit is None or limit < 0 or limit > 100:
            raise GraphQLError(
                f"Requesting {limit} records on the `{self.name}` connection exceeds the "
                f"`{'first' if first is not None else 'last'}` limit of 100 records.")
        start = cursor_index(args["after"]) + 1 if args.get("after") else 0
        end = cursor_index(args["before"]) if args.get("before") else len(items)
        window = list(range(start, min(end, len(items))))
        size = self.fake.cap(limit)
        chosen = window[:size] if first is not None else window[max(len(window) - size, 0):]
        nodes = [items[i] for i in chosen]
        return {
            "totalCount": len(items),
            "nodes": nodes,
            "edges": [{"cursor": cursor(i), "node": items[i]} for i in chosen],
            "pageInfo": {
                "hasNextPage": bool(chosen) and chosen[-1] < len(items) - 1
                if first is not None else end < len(items),
                "hasPreviousPage": bool(chosen) and chosen[0] > 0,
                "startCursor": cursor(chosen[0]) if chosen else None,
                "endCursor": cursor(chosen[-1]) if chosen else None,
            },
        }


def _conn(fake: FakeGitHub, name: str, make: Callable[[], Sequence[Any]]) -> Callable[..., Any]:
    return lambda info, **args: _Connection(fake, name)(make(), args)


def _thread_id(repo: str, number: int, index: int) -> str:
    return base64.b64encode(f"PRRT:{repo}:{number}:{index}".encode()).decode()


class GraphQLRoot:
    """The GraphQL root value: graphql-core's default resolver calls these."""

    def __init__(self, fake: FakeGitHub, points: Points | None = None) -> None:
        self.fake = fake
        self.points = points if points is not None else fake.points  # the caller's

    def repository(self, info: Any, owner: str, name: str, followRenames: bool = True) -> Any:
        repo = self.fake.visible(f"{owner}/{name}", authenticated=True)
        if repo is None:
            raise GraphQLError(
                f"Could not resolve to a Repository with the name '{owner}/{name}'.",
                extensions={"type": "NOT_FOUND"})
        return self._repository(repo)

    def _repository(self, repo: FakeRepo) -> dict[str, Any]:
        def pull_request(info: Any, number: int) -> Any:
            pull = repo.pulls.get(number)
            if pull is None:
                raise GraphQLError(
                    f"Could not resolve to a PullRequest with the number of {number}.",
                    extensions={"type": "NOT_FOUND"})
            return pull_node(self.fake, repo.name, pull)

        return {
            "id": f"R_{repo.name}", "name": repo.name.split("/")[1], "nameWithOwner": repo.name,
            "isPrivate": repo.private, "url": f"https://github.com/{repo.name}",
            "pullRequest": pull_request,
        }

    def search(self, info: Any, query: str, type: str, **args: Any) -> Any:
        if type not in {"ISSUE", "ISSUE_ADVANCED"}:
            raise GraphQLError(f"the fake searches issues only, not {type}")
        try:
            found = self.fake.search_repos(query, authenticated=True)
        except ValueError as exc:
            raise GraphQLError(str(exc)) from None
        if found is None:
            raise GraphQLError(SEARCH_INVALID, extensions={"type": "INVALID"})
        nodes = [pull_node(self.fake, repo, p) for repo, p in found]
        page = _Connection(self.fake, "search")(nodes, args)
        page["issueCount"] = len(nodes)
        return page

    def node(self, info: Any, id: str) -> Any:
        try:
            kind, repo_name, number, index = base64.b64decode(id).decode().split(":")
        except Exception:
            kind = ""
        repo = self.fake.repos.get(repo_name) if kind == "PRRT" else None
        pull = repo.pulls.get(int(number)) if repo else None
        threads = (pull.review_threads or ()) if pull else ()
        if pull is None or int(index) >= len(threads):
            raise GraphQLError(f"Could not resolve to a node with the global id of '{id}'",
                               extensions={"type": "NOT_FOUND"})
        return thread_node(self.fake, repo_name, pull, int(index), threads[int(index)])

    def nodes(self, info: Any, ids: list[str]) -> Any:
        return [self.node(info, i) for i in ids]

    def rateLimit(self, info: Any, dryRun: bool = False) -> Any:
        return self.points.answer()


def thread_node(
    fake: FakeGitHub, repo: str, pull: PullRequest, index: int, thread: ReviewThread
) -> dict[str, Any]:
    comments = [
        {"id": f"PRRC_{pull.number}_{index}_{k}", "author": _actor(c.author),
         "body": c.body or "", "createdAt": iso(c.created_at), "url": c.url}
        for k, c in enumerate(thread.comments)
    ]
    return {
        "__typename": "PullRequestReviewThread",
        "id": _thread_id(repo, pull.number, index),
        "path": thread.path, "line": thread.line, "originalLine": thread.line,
        "isResolved": thread.resolved, "isOutdated": thread.outdated,
        "comments": _conn(fake, "comments", lambda: comments),
    }


def pull_node(fake: FakeGitHub, repo: str, pull: PullRequest) -> dict[str, Any]:
    """A PR in GraphQL's shape; nested connections resolve on demand."""
    threads = pull.review_threads or ()
    rollup = ROLLUP.get(pull.checks or "")
    commit = {"id": f"PRC_{pull.number}", "commit": {
        "id": f"C_{pull.number}", "oid": object_sha(repo, pull.number),
        "statusCheckRollup": {"id": f"SCR_{pull.number}", "state": rollup} if rollup else None,
    }}
    return {
        "__typename": "PullRequest",
        "id": f"PR_{repo}_{pull.number}",
        "number": pull.number, "title": pull.title, "url": pull.url,
        "author": _actor(pull.author), "authorAssociation": association(pull),
        "state": pull.state.upper(), "isDraft": bool(pull.draft),
        "reviewDecision": review_decision(pull),
        "repository": {"id": f"R_{repo}", "name": repo.split("/")[-1], "nameWithOwner": repo,
                       "isPrivate": fake.repos[repo].private if repo in fake.repos else False,
                       "url": f"https://github.com/{repo}", "pullRequest": None},
        "createdAt": iso(pull.created_at), "updatedAt": iso(pull.updated_at),
        "mergedAt": iso(pull.merged_at), "closedAt": iso(pull.closed_at),
        "baseRefName": pull.base or "main", "body": pull.body or "",
        "additions": pull.additions or 0, "deletions": pull.deletions or 0,
        "changedFiles": pull.changed_files or 0,
        "labels": _conn(fake, "labels", lambda: [
            {"id": f"L_{name}", "name": name} for name in pull.labels]),
        "files": _conn(fake, "files", lambda: [
            {"path": f.path, "additions": f.additions, "deletions": f.deletions,
             "changeType": CHANGE_TYPE.get(f.status or "modified", "MODIFIED")}
            for f in pull.files]),
        "reviews": _conn(fake, "reviews", lambda: [
            {"id": f"PRR_{pull.number}_{k}", "author": _actor(r.author), "state": r.state,
             "submittedAt": iso(r.submitted_at), "body": r.body or ""}
            for k, r in enumerate(pull.reviews or ())]),
        "reviewThreads": _conn(fake, "reviewThreads", lambda: [
            thread_node(fake, repo, pull, k, t) for k, t in enumerate(threads)]),
        "comments": _conn(fake, "comments", lambda: [
            {"id": f"IC_{pull.number}_{k}", "author": _actor(c.author), "body": c.body or "",
             "createdAt": iso(c.created_at)}
            for k, c in enumerate(pull.comments or ())]),
        "commits": _conn(fake, "commits", lambda: [commit]),
    }
