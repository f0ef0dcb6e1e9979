"""A fake GitHub on 127.0.0.1:<free port> that the real PyGithub talks to.

It serves fixture PRs (snapshot-shaped `PullRequest` records) in GitHub's own
response shapes: the REST endpoints the REST fallback and the naive bench use, with
`Link` pagination, and GraphQL executed by graphql-core against a subset of GitHub's
schema (same type, field and argument names), so a misspelt field or a connection
asked for without `first` fails here as it would on GitHub.

Switches for tests and benches: per-request latency, bursts of 5xx answers, stalls
(for client timeouts), rate limits (403 primary, 429 secondary, GraphQL
RATE_LIMITED), a remaining-request budget, and a cap on page sizes to force
pagination. GraphQL queries are charged GitHub's points by its documented formula
(`github_points`), reported in `rateLimit` and the headers, and refused when spent.
Every request is recorded (method, path, query, headers, body, status).
Absolute URLs in answers are built from the server's own base URL, because PyGithub
refuses to follow URLs to another host or port.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from graphql import GraphQLError, build_schema, graphql_sync

from bot.models import PullRequest, ReviewThread
from testkit.fakes.github_apps import FakeApps
from testkit.fakes.github_points import Points
from testkit.fakes.http_server import FakeHTTPServer

SCHEMA = build_schema('''
scalar DateTime
scalar URI
scalar GitObjectID

type Query {
  repository(owner: String!, name: String!, followRenames: Boolean = true): Repository
  search(query: String!, type: SearchType!, first: Int, after: String, last: Int,
         before: String): SearchResultItemConnection!
  node(id: ID!): Node
  nodes(ids: [ID!]!): [Node]!
  rateLimit(dryRun: Boolean = false): RateLimit
}

enum SearchType { DISCUSSION ISSUE ISSUE_ADVANCED REPOSITORY USER }

type RateLimit {
  cost: Int! limit: Int! nodeCount: Int! remaining: Int! resetAt: DateTime! used: Int!
}

interface Node { id: ID! }
interface Actor { login: String! url: URI! }
type User implements Actor & Node { id: ID! login: String! url: URI! }
type Bot implements Actor & Node { id: ID! login: String! url: URI! }

type PageInfo {
  endCursor: String hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String
}

type Repository implements Node {
  id: ID!
  name: String!
  nameWithOwner: String!
  isPrivate: Boolean!
  url: URI!
  pullRequest(number: Int!): PullRequest
}

union SearchResultItem = Issue | PullRequest | Repository | User
type SearchResultItemEdge { cursor: String! node: SearchResultItem }
type SearchResultItemConnection {
  issueCount: Int!
  pageInfo: PageInfo!
  nodes: [SearchResultItem]
  edges: [SearchResultItemEdge]
}
type Issue implements Node { id: ID! number: Int! title: String! url: URI! }

enum PullRequestState { CLOSED MERGED OPEN }
enum CommentAuthorAssociation {
  COLLABORATOR CONTRIBUTOR FIRST_TIMER FIRST_TIME_CONTRIBUTOR MANNEQUIN MEMBER NONE OWNER
}
enum PatchStatus { ADDED CHANGED COPIED DELETED MODIFIED RENAMED }
enum PullRequestReviewState { APPROVED CHANGES_REQUESTED COMMENTED DISMISSED PENDING }
enum StatusState { ERROR EXPECTED FAILURE PENDING SUCCESS }

type PullRequest implements Node {
  id: ID!
  number: Int!
  title: String!
  url: URI!
  author: Actor
  authorAssociation: CommentAuthorAssociation
  state: PullRequestState!
  isDraft: Boolean!
  createdAt: DateTime!
  updatedAt: DateTime!
  mergedAt: DateTime
  closedAt: DateTime
  baseRefName: String!
  body: String!
  additions: Int!
  deletions: Int!
  changedFiles: Int!
  labels(first: Int, after: String, last: Int, before: String): LabelConnection
  files(first: Int, after: String, last: Int, before: String): PullRequestChangedFileConnection
  reviews(first: Int, after: String, last: Int, before: String): PullRequestReviewConnection
  reviewThreads(first: Int, after: String, last: Int, before: String):
    PullRequestReviewThreadConnection!
  comments(first: Int, after: String, last: Int, before: String): IssueCommentConnection!
  commits(first: Int, after: String, last: Int, before: String): PullRequestCommitConnection!
}

type Label implements Node { id: ID! name: String! }
type LabelConnection { nodes: [Label] pageInfo: PageInfo! totalCount: Int! }

type PullRequestChangedFile {
  path: String! additions: Int! deletions: Int! changeType: PatchStatus!
}
type PullRequestChangedFileConnection {
  nodes: [PullRequestChangedFile] pageInfo: PageInfo! totalCount: Int!
}

type PullRequestReview implements Node {
  id: ID! author: Actor state: PullRequestReviewState! submittedAt: DateTime body: String!
}
type PullRequestReviewConnection { nodes: [PullRequestReview] pageInfo: PageInfo! totalCount: Int! }

type PullRequestReviewThread implements Node {
  id: ID!
  path: String!
  line: Int
  originalLine: Int
  isResolved: Boolean!
  isOutdated: Boolean!
  comments(first: Int, after: String, last: Int, before: String, skip: Int):
    PullRequestReviewCommentConnection!
}
type PullRequestReviewThreadConnection {
  nodes: [PullRequestReviewThread] pageInfo: PageInfo! totalCount: Int!
}
type PullRequestReviewComment implements Node {
  id: ID! author: Actor body: String! createdAt: DateTime! url: URI!
}
type PullRequestReviewCommentConnection {
  nodes: [PullRequestReviewComment] pageInfo: PageInfo! totalCount: Int!
}

type IssueComment implements Node { id: ID! author: Actor body: String! createdAt: DateTime! }
type IssueCommentConnection { nodes: [IssueComment] pageInfo: PageInfo! totalCount: Int! }

type StatusCheckRollup implements Node { id: ID! state: StatusState! }
type Commit implements Node { id: ID! oid: GitObjectID! statusCheckRollup: StatusCheckRollup }
type PullRequestCommit implements Node { id: ID! commit: Commit! }
type PullRequestCommitConnection { nodes: [PullRequestCommit] pageInfo: PageInfo! totalCount: Int! }
''')

SEARCH_INVALID = (
    "The listed users and repositories cannot be searched either because the resources "
    "do not exist or you do not have permission to view them."
)
_CHANGE_TYPE = {"added": "ADDED", "removed": "DELETED", "modified": "MODIFIED",
                "renamed": "RENAMED", "copied": "COPIED", "changed": "CHANGED"}
_ROLLUP = {"success": "SUCCESS", "failure": "FAILURE", "pending": "PENDING"}
_RUN = {"success": ("completed", "success"), "failure": ("completed", "failure"),
        "pending": ("in_progress", None)}


def iso(moment: datetime | None) -> str | None:
    """GitHub's time format: UTC, whole seconds, `Z`."""
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _index(cursor: str) -> int:
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except Exception:
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from None


def _sha(*parts: object) -> str:
    return hashlib.sha1(":".join(map(str, parts)).encode()).hexdigest()


@dataclass
class Recorded:
    """One request as the fake received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    status: int = 0

    @property
    def kind(self) -> str:
        return "graphql" if self.path.endswith("/graphql") else "rest"

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class FakeRepo:
    name: str
    pulls: dict[int, PullRequest]
    private: bool = False


@dataclass
class _Burst:
    """An answer to give instead of the real one, `count` times."""

    count: int
    respond: Callable[[], tuple[int, dict[str, str], Any]]


# --- search -------------------------------------------------------------------------

_RANGE = re.compile(r"^(?P<op>>=|<=|>|<)?(?P<a>[^.]+?)(?:\.\.(?P<b>.+))?$")


def _parse_moment(text: str, *, end: bool) -> datetime:
    """A search qualifier's date or time; a bare date means its first or last second."""
    if "T" not in text:
        day = datetime.fromisoformat(text).replace(tzinfo=UTC)
        return day + timedelta(days=1, seconds=-1) if end else day
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def _date_filter(value: str) -> Callable[[datetime | None], bool]:
    match = _RANGE.match(value)
    if not match:
        raise ValueError(f"bad date qualifier {value!r}")
    op, a, b = match["op"], match["a"], match["b"]
    if b is not None:
        low, high = _parse_moment(a, end=False), _parse_moment(b, end=True)
        return lambda m: m is not None and low <= m <= high
    if op == ">=":
        low = _parse_moment(a, end=False)
        return lambda m: m is not None and m >= low
    if op == ">":
        low = _parse_moment(a, end=True)
        return lambda m: m is not None and m > low
    if op == "<=":
        high = _parse_moment(a, end=True)
        return lambda m: m is not None and m <= high
    if op == "<":
        high = _parse_moment(a, end=False)
        return lambda m: m is not None and m < high
    low, high = _parse_moment(a, end=False), _parse_moment(a, end=True)
    return lambda m: m is not None and low <= m <= high


def parse_search(query: str) -> tuple[str | None, Callable[[PullRequest], bool], str]:
    """(repository, predicate, sort) for the issue-search qualifiers the bot uses."""
    repo: str | None = None
    tests: list[Callable[[PullRequest], bool]] = []
    sort = "created-desc"
    for token in query.split():
        key, sep, value = token.partition(":")
        if not sep:
            raise ValueError(f"free-text search terms are not supported by the fake: {token!r}")
        if key == "repo":
            repo = value
        elif key in {"is", "state", "type"}:
            tests.append(_state_test(value))
        elif key in {"closed", "merged", "created", "updated"}:
            attr = {"closed": "closed_at", "merged": "merged_at",
                    "created": "created_at", "updated": "updated_at"}[key]
            tests.append(_field_test(attr, _date_filter(value)))
        elif key == "sort":
            sort = value
        else:
            raise ValueError(f"unsupported search qualifier {key!r}")
    return repo, (lambda p: all(t(p) for t in tests)), sort


def _field_test(attr: str, check: Callable[[datetime | None], bool]
                ) -> Callable[[PullRequest], bool]:
    return lambda pull: check(getattr(pull, attr))


def _state_test(value: str) -> Callable[[PullRequest], bool]:
    tests: dict[str, Callable[[PullRequest], bool]] = {
        "pr": lambda p: True,
        "issue": lambda p: False,
        "open": lambda p: p.state == "open",
        "closed": lambda p: p.state != "open",
        "merged": lambda p: p.state == "merged",
        "unmerged": lambda p: p.state != "merged",
    }
    if value not in tests:
        raise ValueError(f"unsupported is: qualifier {value!r}")
    return tests[value]


def _sorted(pulls: list[PullRequest], sort: str) -> list[PullRequest]:
    field_name, _, direction = sort.partition("-")
    attr = {"created": "created_at", "updated": "updated_at"}.get(field_name, "created_at")
    floor = datetime.min.replace(tzinfo=UTC)
    return sorted(
        pulls, key=lambda p: (getattr(p, attr) or floor, p.number), reverse=direction != "asc"
    )


# --- the server ---------------------------------------------------------------------


class FakeGitHub:
    """A GitHub API double in a thread; use as a context manager.

    `token` is the one token it accepts (None: no authentication accepted at all).
    """

    def __init__(
        self,
        *,
        token: str | None = "ghp_fake_token",
        latency: float = 0.0,
        page_cap: int | None = None,
        rate_budget: int | None = None,
    ) -> None:
        self.token = token
        self.latency = latency
        self.page_cap = page_cap
        self.rate_budget = rate_budget
        self.rate_reset_in = 3600
        # GraphQL points, spent by GitHub's formula (see `github_points`).
        self.points = Points()
        # GitHub Apps: JWT-signed /app/... requests and the installation tokens minted.
        self.apps = FakeApps()
        self.repos: dict[str, FakeRepo] = {}
        # PR numbers search does not find yet (GitHub's search index lags updates).
        self.unindexed: set[int] = set()
        self.requests: list[Recorded] = []
        self._bursts: list[_Burst] = []
        self._stalls: list[float] = []
        self._lock = threading.Lock()
        self._server: FakeHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --

    def start(self) -> FakeGitHub:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = FakeHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- data --

    def add_repo(self, name: str, pulls: Sequence[PullRequest], *, private: bool = False) -> None:
        self.repos[name] = FakeRepo(name, {p.number: p for p in pulls}, private)

    def put_pull(self, repo: str, pull: PullRequest) -> None:
        """Add or replace a PR (a test's way of changing GitHub)."""
        with self._lock:
            self.repos[repo].pulls[pull.number] = pull

    def touch(self, repo: str, number: int, **changes: Any) -> PullRequest:
        """Change a PR as GitHub would: the new fields, and `updated_at` moved to now."""
        import msgspec

        now = datetime.now(UTC).replace(microsecond=0)
        changes.setdefault("updated_at", now)
        pull = msgspec.structs.replace(self.repos[repo].pulls[number], **changes)
        self.put_pull(repo, pull)
        return pull

    # -- switches --

    def fail_next(self, count: int, status: int = 502) -> None:
        """The next `count` requests get a 5xx answer."""
        self._bursts.append(_Burst(count, lambda: (status, {}, {"message": "Server Error"})))

    def stall_next(self, count: int, seconds: float) -> None:
        """The next `count` requests wait `seconds` before answering (client timeouts)."""
        self._stalls.extend([seconds] * count)

    def rate_limit_next(
        self, count: int = 1, *, kind: str = "primary", reset_in: int = 30,
        retry_after: int | None = None, status: int = 429,
    ) -> None:
        """The next `count` requests hit a rate limit.

        kind: "primary" (403, remaining 0, reset time), "secondary" (`status`, 429 or
        403 as GitHub sends either, with Retry-After), "graphql" (200 with a
        RATE_LIMITED error, as GraphQL reports it).
        """
        def respond() -> tuple[int, dict[str, str], Any]:
            reset = str(int(time.time()) + reset_in)
            headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset,
                       "X-RateLimit-Limit": "5000"}
            if retry_after is not None:
                headers["Retry-After"] = str(retry_after)
            if kind == "secondary":
                headers.pop("X-RateLimit-Remaining")
                headers.setdefault("Retry-After", str(reset_in))
                return status, headers, {"message": "You have exceeded a secondary rate limit. "
                                                 "Please wait a few minutes before you try again."}
            if kind == "graphql":
                return 200, headers, {"errors": [{"type": "RATE_LIMITED", "message":
                                                  "API rate limit exceeded for user ID 1."}]}
            return 403, headers, {"message": "API rate limit exceeded for user ID 1."}

        self._bursts.append(_Burst(count, respond))

    def recover(self) -> None:
        """End every scripted failure and stall: GitHub is back."""
        with self._lock:
            self._bursts.clear()
            self._stalls.clear()

    # -- records --

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def count(self, kind: str | None = None, path: str | None = None) -> int:
        """Requests received, optionally only GraphQL/REST ones or one path prefix."""
        with self._lock:
            return sum(
                1 for r in self.requests
                if (kind is None or r.kind == kind) and (path is None or r.path.startswith(path))
            )

    # -- request handling (called from the server's threads) --

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def _intercept(self) -> tuple[int, dict[str, str], Any] | None:
        with self._lock:
            stall = self._stalls.pop(0) if self._stalls else 0.0
            burst = self._bursts[0] if self._bursts else None
            if burst is not None:
                burst.count -= 1
                if burst.count <= 0:
                    self._bursts.pop(0)
            if burst is None and self.rate_budget is not None:
                if self.rate_budget <= 0:
                    return 403, self._limit_headers(), {
                        "message": "API rate limit exceeded for user ID 1."}
                self.rate_budget -= 1
        if stall:
            time.sleep(stall)
        if self.latency:
            time.sleep(self.latency)
        return burst.respond() if burst is not None else None

    def _limit_headers(self) -> dict[str, str]:
        remaining = 4999 if self.rate_budget is None else max(self.rate_budget, 0)
        return {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": str(remaining),
                "X-RateLimit-Reset": str(int(time.time()) + self.rate_reset_in)}

    def _authorized(self, headers: dict[str, str]) -> bool | None:
        """True with the right token, None without one, False with a wrong one."""
        value = headers.get("authorization")
        if not value:
            return None
        scheme, _, token = value.partition(" ")
        return scheme.lower() in {"token", "bearer"} and (
            token == self.token or self.apps.accepts(token))

    def handle(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        if request.path.startswith("/app/"):
            return self.apps.answer(request.method, request.path,
                                    request.headers.get("authorization"), self.base_url)
        auth = self._authorized(request.headers)
        if auth is False:
            return 401, {}, {"message": "Bad credentials",
                             "documentation_url": "https://docs.github.com/rest"}
        if request.method == "POST" and request.kind == "graphql":
            if auth is None:
                return 401, {}, {"message": "This endpoint requires you to be authenticated."}
            answer = self._graphql(request.json())
            return 200, self.points.headers(), answer
        if request.method == "GET":
            return _Rest(self, request, authenticated=auth is True).answer()
        return 404, {}, {"message": "Not Found"}

    # -- GraphQL --

    def _graphql(self, payload: Any) -> dict[str, Any]:
        query = payload.get("query", "")
        variables = payload.get("variables") or {}
        refused = self.points.spend(query, variables)
        if refused is not None:
            return refused
        result = graphql_sync(SCHEMA, query, root_value=_Root(self), variable_values=variables)
        out: dict[str, Any] = {}
        if result.data is not None or not result.errors:
            out["data"] = result.data
        if result.errors:
            errors = []
            for error in result.errors:
                formatted: dict[str, Any] = dict(error.formatted)
                extensions: dict[str, Any] = formatted.pop("extensions", None) or {}
                if "type" in extensions:
                    formatted["type"] = extensions["type"]
                errors.append(formatted)
            out["errors"] = errors
        return out

    def visible(self, name: str, *, authenticated: bool) -> FakeRepo | None:
        repo = self.repos.get(name)
        if repo is None or (repo.private and not authenticated):
            return None
        return repo

    def search(self, query: str, *, authenticated: bool) -> list[PullRequest] | None:
        """PRs matching an issue-search query, or None when its repo is not visible."""
        name, predicate, sort = parse_search(query)
        repo = self.visible(name or "", authenticated=authenticated)
        if repo is None:
            return None
        with self._lock:
            pulls = list(repo.pulls.values())
        found = [p for p in pulls if predicate(p) and p.number not in self.unindexed]
        return _sorted(found, sort)

    def cap(self, requested: int) -> int:
        return min(requested, self.page_cap) if self.page_cap else requested


# --- GraphQL resolvers ----------------------------------------------------------------


def _association(pull: PullRequest) -> str | None:
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
        start = _index(args["after"]) + 1 if args.get("after") else 0
        end = _index(args["before"]) if args.get("before") else len(items)
        window = list(range(start, min(end, len(items))))
        size = self.fake.cap(limit)
        chosen = window[:size] if first is not None else window[max(len(window) - size, 0):]
        nodes = [items[i] for i in chosen]
        return {
            "totalCount": len(items),
            "nodes": nodes,
            "edges": [{"cursor": _cursor(i), "node": items[i]} for i in chosen],
            "pageInfo": {
                "hasNextPage": bool(chosen) and chosen[-1] < len(items) - 1
                if first is not None else end < len(items),
                "hasPreviousPage": bool(chosen) and chosen[0] > 0,
                "startCursor": _cursor(chosen[0]) if chosen else None,
                "endCursor": _cursor(chosen[-1]) if chosen else None,
            },
        }


def _conn(fake: FakeGitHub, name: str, make: Callable[[], Sequence[Any]]) -> Callable[..., Any]:
    return lambda info, **args: _Connection(fake, name)(make(), args)


def _thread_id(repo: str, number: int, index: int) -> str:
    return base64.b64encode(f"PRRT:{repo}:{number}:{index}".encode()).decode()


class _Root:
    """The GraphQL root value: graphql-core's default resolver calls these."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake

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
            found = self.fake.search(query, authenticated=True)
        except ValueError as exc:
            raise GraphQLError(str(exc)) from None
        if found is None:
            raise GraphQLError(SEARCH_INVALID, extensions={"type": "INVALID"})
        repo = parse_search(query)[0] or ""
        nodes = [pull_node(self.fake, repo, p) for p in found]
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
        return self.fake.points.answer()


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
    rollup = _ROLLUP.get(pull.checks or "")
    commit = {"id": f"PRC_{pull.number}", "commit": {
        "id": f"C_{pull.number}", "oid": _sha(repo, pull.number),
        "statusCheckRollup": {"id": f"SCR_{pull.number}", "state": rollup} if rollup else None,
    }}
    return {
        "__typename": "PullRequest",
        "id": f"PR_{repo}_{pull.number}",
        "number": pull.number, "title": pull.title, "url": pull.url,
        "author": _actor(pull.author), "authorAssociation": _association(pull),
        "state": pull.state.upper(), "isDraft": bool(pull.draft),
        "createdAt": iso(pull.created_at), "updatedAt": iso(pull.updated_at),
        "mergedAt": iso(pull.merged_at), "closedAt": iso(pull.closed_at),
        "baseRefName": pull.base or "main", "body": pull.body or "",
        "additions": pull.additions or 0, "deletions": pull.deletions or 0,
        "changedFiles": pull.changed_files or 0,
        "labels": _conn(fake, "labels", lambda: [
            {"id": f"L_{name}", "name": name} for name in pull.labels]),
        "files": _conn(fake, "files", lambda: [
            {"path": f.path, "additions": f.additions, "deletions": f.deletions,
             "changeType": _CHANGE_TYPE.get(f.status or "modified", "MODIFIED")}
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


# --- REST -----------------------------------------------------------------------------

LEGACY_SEARCH_GONE = ("The legacy issue search is no longer available; search with "
                      "advanced_search=true")

_ROUTES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^/search/issues$"), "search"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)$"), "repository"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)$"), "pull"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)/files$"), "files"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)/reviews$"), "reviews"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>\d+)/comments$"), "review_comments"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<n>\d+)/comments$"), "issue_comments"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/commits/(?P<sha>\w+)/status$"), "status"),
    (re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/commits/(?P<sha>\w+)/check-runs$"), "check_runs"),
    (re.compile(r"^/rate_limit$"), "rate_limit"),
]


class _Rest:
    """One REST request: route, look up, answer in GitHub's JSON shape."""

    def __init__(self, fake: FakeGitHub, request: Recorded, *, authenticated: bool) -> None:
        self.fake = fake
        self.request = request
        self.authenticated = authenticated
        self.base = fake.base_url

    def answer(self) -> tuple[int, dict[str, str], Any]:
        for pattern, name in _ROUTES:
            match = pattern.match(self.request.path)
            if match:
                handler: Callable[..., tuple[int, dict[str, str], Any]] = getattr(self, name)
                return handler(**match.groupdict())
        return self._not_found()

    @staticmethod
    def _not_found() -> tuple[int, dict[str, str], Any]:
        return 404, {}, {"message": "Not Found",
                         "documentation_url": "https://docs.github.com/rest"}

    def _arg(self, name: str, default: int) -> int:
        values = self.request.query.get(name)
        return int(values[0]) if values else default

    def _page(self, items: list[Any]) -> tuple[int, dict[str, str], Any]:
        """One page of a list endpoint, with GitHub's `Link` header."""
        per_page = self.fake.cap(min(self._arg("per_page", 30), 100))
        page = max(self._arg("page", 1), 1)
        chunk = items[(page - 1) * per_page: page * per_page]
        return 200, self._links(page, per_page, len(items)), chunk

    def _links(self, page: int, per_page: int, total: int) -> dict[str, str]:
        last = max((total + per_page - 1) // per_page, 1)
        links = []

        def url(number: int) -> str:
            query = {k: v[0] for k, v in self.request.query.items()}
            query.update(page=str(number), per_page=str(per_page))
            return f"<{self.base}{self.request.path}?{urlencode(query)}>"

        if page < last:
            links += [f'{url(page + 1)}; rel="next"', f'{url(last)}; rel="last"']
        if page > 1:
            links += [f'{url(page - 1)}; rel="prev"', f'{url(1)}; rel="first"']
        return {"Link": ", ".join(links)} if links else {}

    def _user(self, login: str | None) -> dict[str, Any] | None:
        if login is None:
            return None
        return {"login": login, "id": int(_sha(login)[:6], 16),
                "type": "Bot" if login.endswith("[bot]") else "User",
                "url": f"{self.base}/users/{login}", "html_url": f"https://github.com/{login}"}

    def _pull(self, repo: str, n: str) -> tuple[FakeRepo, PullRequest] | None:
        found = self.fake.visible(repo, authenticated=self.authenticated)
        pull = found.pulls.get(int(n)) if found else None
        return (found, pull) if found and pull else None

    # endpoints

    def rate_limit(self) -> tuple[int, dict[str, str], Any]:
        core = {"limit": 5000, "remaining": 4999, "reset": int(time.time()) + 3600, "used": 1}
        return 200, {}, {"resources": {"core": core, "search": core, "graphql": core},
                         "rate": core}

    def search(self) -> tuple[int, dict[str, str], Any]:
        query = (self.request.query.get("q") or [""])[0]
        if (self.request.query.get("advanced_search") or [""])[0] != "true":
            # GitHub is removing the legacy issue search; a client still on it fails here
            # rather than on the day GitHub turns it off.
            return 422, {}, {"message": LEGACY_SEARCH_GONE, "errors": [
                {"resource": "Search", "field": "advanced_search", "code": "invalid"}]}
        try:
            found = self.fake.search(query, authenticated=self.authenticated)
        except ValueError as exc:
            return 422, {}, {"message": "Validation Failed",
                             "errors": [{"message": str(exc), "code": "invalid"}]}
        if found is None:
            return 422, {}, {"message": "Validation Failed", "errors": [
                {"message": SEARCH_INVALID, "resource": "Search", "field": "q",
                 "code": "invalid"}]}
        repo = parse_search(query)[0] or ""
        status, headers, chunk = self._page([self._issue(repo, p) for p in found])
        return status, headers, {"total_count": len(found), "incomplete_results": False,
                                 "items": chunk}

    def _issue(self, repo: str, pull: PullRequest) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo}"
        return {
            "url": f"{api}/issues/{pull.number}", "repository_url": api,
            "html_url": pull.url, "id": pull.number, "number": pull.number,
            "title": pull.title, "user": self._user(pull.author),
            "state": "open" if pull.state == "open" else "closed",
            "labels": [{"name": name, "url": f"{api}/labels/{name}"} for name in pull.labels],
            "created_at": iso(pull.created_at), "updated_at": iso(pull.updated_at),
            "closed_at": iso(pull.closed_at), "body": pull.body, "draft": bool(pull.draft),
            "comments": len(pull.comments or ()),
            "pull_request": {"url": f"{api}/pulls/{pull.number}", "html_url": pull.url,
                             "merged_at": iso(pull.merged_at)},
        }

    def repository(self, repo: str) -> tuple[int, dict[str, str], Any]:
        found = self.fake.visible(repo, authenticated=self.authenticated)
        if found is None:
            return self._not_found()
        return 200, {}, {"id": 1, "name": repo.split("/")[1], "full_name": repo,
                         "private": found.private, "url": f"{self.base}/repos/{repo}",
                         "html_url": f"https://github.com/{repo}"}

    def pull(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        _, p = found
        api = f"{self.base}/repos/{repo}"
        sha = _sha(repo, p.number)
        return 200, {}, {
            "url": f"{api}/pulls/{p.number}", "id": p.number, "html_url": p.url,
            "issue_url": f"{api}/issues/{p.number}", "number": p.number,
            "state": "open" if p.state == "open" else "closed", "title": p.title,
            "user": self._user(p.author), "body": p.body,
            "author_association": _association(p),
            "labels": [{"name": name, "url": f"{api}/labels/{name}"} for name in p.labels],
            "created_at": iso(p.created_at), "updated_at": iso(p.updated_at),
            "closed_at": iso(p.closed_at), "merged_at": iso(p.merged_at),
            "merged": p.state == "merged", "draft": bool(p.draft),
            "head": {"ref": f"topic-{p.number}", "sha": sha, "label": f"fork:topic-{p.number}"},
            "base": {"ref": p.base or "main", "sha": _sha("base", repo), "label": "main"},
            "additions": p.additions or 0, "deletions": p.deletions or 0,
            "changed_files": p.changed_files or 0,
            "comments": len(p.comments or ()),
            "review_comments": sum(len(t.comments) for t in p.review_threads or ()),
        }

    def files(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        return self._page([
            {"sha": _sha(f.path), "filename": f.path, "status": f.status or "modified",
             "additions": f.additions, "deletions": f.deletions,
             "changes": f.additions + f.deletions}
            for f in found[1].files])

    def reviews(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        p = found[1]
        return self._page([
            {"id": p.number * 1000 + k, "user": self._user(r.author), "body": r.body or "",
             "state": r.state, "submitted_at": iso(r.submitted_at),
             "html_url": f"{p.url}#pullrequestreview-{p.number * 1000 + k}",
             "pull_request_url": f"{self.base}/repos/{repo}/pulls/{p.number}"}
            for k, r in enumerate(p.reviews or ())])

    def review_comments(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        p = found[1]
        items = []
        serial = 0
        for thread in p.review_threads or ():
            root = None
            for comment in thread.comments:
                serial += 1
                ident = p.number * 100_000 + serial
                item = {
                    "id": ident, "url": f"{self.base}/repos/{repo}/pulls/comments/{ident}",
                    "path": thread.path, "line": thread.line, "original_line": thread.line,
                    "position": None if thread.outdated else 1, "original_position": 1,
                    "user": self._user(comment.author), "body": comment.body or "",
                    "created_at": iso(comment.created_at), "updated_at": iso(comment.created_at),
                    "html_url": comment.url,
                    "pull_request_url": f"{self.base}/repos/{repo}/pulls/{p.number}",
                }
                if root is None:
                    root = ident
                else:
                    item["in_reply_to_id"] = root
                items.append(item)
        return self._page(items)

    def issue_comments(self, repo: str, n: str) -> tuple[int, dict[str, str], Any]:
        found = self._pull(repo, n)
        if found is None:
            return self._not_found()
        p = found[1]
        return self._page([
            {"id": p.number * 1000 + k, "user": self._user(c.author), "body": c.body or "",
             "created_at": iso(c.created_at), "updated_at": iso(c.created_at),
             "html_url": f"{p.url}#issuecomment-{p.number * 1000 + k}",
             "url": f"{self.base}/repos/{repo}/issues/comments/{p.number * 1000 + k}"}
            for k, c in enumerate(p.comments or ())])

    def _by_sha(self, repo: str, sha: str) -> PullRequest | None:
        found = self.fake.visible(repo, authenticated=self.authenticated)
        if found is None:
            return None
        return next((p for p in found.pulls.values() if _sha(repo, p.number) == sha), None)

    def status(self, repo: str, sha: str) -> tuple[int, dict[str, str], Any]:
        """Combined status: the fake keeps check state in check runs, like Actions."""
        if self._by_sha(repo, sha) is None:
            return self._not_found()
        return 200, {}, {"state": "pending", "statuses": [], "sha": sha, "total_count": 0,
                         "url": f"{self.base}/repos/{repo}/commits/{sha}/status"}

    def check_runs(self, repo: str, sha: str) -> tuple[int, dict[str, str], Any]:
        pull = self._by_sha(repo, sha)
        if pull is None:
            return self._not_found()
        runs = []
        if pull.checks in _RUN:
            status, conclusion = _RUN[pull.checks]
            runs.append({"id": pull.number, "name": "tests", "head_sha": sha, "status": status,
                         "conclusion": conclusion,
                         "url": f"{self.base}/repos/{repo}/check-runs/{pull.number}"})
        status_code, headers, chunk = self._page(runs)
        return status_code, headers, {"total_count": len(runs), "check_runs": chunk}


class _Handler(BaseHTTPRequestHandler):
    owner: FakeGitHub
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each answer waits ~40 ms for a delayed ACK

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests assert on the recorded requests instead."""

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = Recorded(
            method=self.command, path=parts.path, query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in self.headers.items()}, body=body,
        )
        self.owner._record(request)
        answer = self.owner._intercept()
        status, headers, payload = answer if answer is not None else self.owner.handle(request)
        request.status = status
        data = json.dumps(payload).encode()
        self.send_response(status)
        merged = {**self.owner._limit_headers(), **headers}
        for key, value in merged.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        # A client that gave up waiting (the stall switch) is not there to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)

    do_GET = _serve
    do_POST = _serve


def iter_graphql_queries(fake: FakeGitHub) -> Iterator[str]:
    """The GraphQL documents received, in order (for assertions on batching)."""
    for request in list(fake.requests):
        if request.kind == "graphql":
            yield request.json().get("query", "")
