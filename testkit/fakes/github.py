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

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from graphql import graphql_sync

from bot.models import PullRequest
from testkit.fakes.github_apps import FakeApps
from testkit.fakes.github_graphql import GraphQLRoot
from testkit.fakes.github_points import Points
from testkit.fakes.github_rest import RestApi
from testkit.fakes.github_search import parse_search, searched_repos, sort_pulls
from testkit.fakes.github_shapes import SCHEMA, FakeRepo, Recorded
from testkit.fakes.http_server import FakeHTTPServer


@dataclass
class _Burst:
    """An answer to give instead of the real one, `count` times."""

    count: int
    respond: Callable[[], tuple[int, dict[str, str], Any]]


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
        more_tokens: Sequence[str] = (),
    ) -> None:
        self.token = token
        # What time it is for the reset times it gives (epoch seconds): real time, or
        # the clock of the source under test, so a reset is as far off as it said.
        self.now: Callable[[], float] = time.time
        # More personal tokens, each with GraphQL points of its own (`points_of`).
        self.token_points: dict[str, Points] = {t: Points() for t in more_tokens}
        # A private repository only these tokens may see (`add_repo(readers=...)`).
        self.readers: dict[str, frozenset[str]] = {}
        self._caller = threading.local()
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

    def add_repo(self, name: str, pulls: Sequence[PullRequest], *, private: bool = False,
                 readers: Sequence[str] | None = None) -> None:
        """`readers`: the tokens that see the (private) repository; others get GitHub's
        "Could not resolve to a Repository". None: every accepted credential."""
        self.repos[name] = FakeRepo(name, {p.number: p for p in pulls}, private)
        if readers is not None:
            self.readers[name] = frozenset(readers)

    def points_of(self, token: str) -> Points:
        """The GraphQL points a token spends (`token`'s are `points`)."""
        return self.token_points.get(token, self.points)

    def requests_by(self, token: str) -> int:
        """Requests that carried `token`."""
        with self._lock:
            return sum(1 for r in self.requests
                       if r.headers.get("authorization", "").endswith(f" {token}"))

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
            reset = str(int(self.now()) + reset_in)
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
                "X-RateLimit-Reset": str(int(self.now()) + self.rate_reset_in)}

    def _authorized(self, headers: dict[str, str]) -> bool | None:
        """True with the right token, None without one, False with a wrong one."""
        value = headers.get("authorization")
        if not value:
            return None
        scheme, _, token = value.partition(" ")
        return scheme.lower() in {"token", "bearer"} and (
            token == self.token or token in self.token_points or self.apps.accepts(token))

    def handle(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        if request.path.startswith("/app/"):
            return self.apps.answer(request.method, request.path,
                                    request.headers.get("authorization"), self.base_url)
        auth = self._authorized(request.headers)
        if auth is False:
            return 401, {}, {"message": "Bad credentials",
                             "documentation_url": "https://docs.github.com/rest"}
        # Who asks: a private repository's `readers` are checked against it.
        token = request.headers.get("authorization", "").partition(" ")[2]
        self._caller.token = token or None
        if request.method == "POST" and request.kind == "graphql":
            if auth is None:
                return 401, {}, {"message": "This endpoint requires you to be authenticated."}
            points = self.points_of(token)
            answer = self._graphql(request.json(), points)
            return 200, points.headers(), answer
        if request.method == "GET":
            return RestApi(self, request, authenticated=auth is True).answer()
        return 404, {}, {"message": "Not Found"}

    # -- GraphQL --

    def _graphql(self, payload: Any, points: Points) -> dict[str, Any]:
        query = payload.get("query", "")
        variables = payload.get("variables") or {}
        refused = points.spend(query, variables)
        if refused is not None:
            return refused
        result = graphql_sync(SCHEMA, query, root_value=GraphQLRoot(self, points),
                              variable_values=variables)
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
        """The repository by its name, in any case (as GitHub finds it)."""
        repo = self.repos.get(name) or next(
            (held for key, held in self.repos.items() if key.lower() == name.lower()), None)
        if repo is None or (repo.private and not authenticated):
            return None
        readers = self.readers.get(name)
        if readers is not None and getattr(self._caller, "token", None) not in readers:
            return None
        return repo

    def search(self, query: str, *, authenticated: bool) -> list[PullRequest] | None:
        """PRs matching an issue-search query, or None when its repo is not visible."""
        found = self.search_repos(query, authenticated=authenticated)
        return None if found is None else [pull for _, pull in found]

    def search_repos(self, query: str, *, authenticated: bool
                     ) -> list[tuple[str, PullRequest]] | None:
        """(repository, PR) of each PR matching an issue-search query over one or more
        `repo:` qualifiers, or None when one of them is not visible."""
        _, predicate, sort = parse_search(query)
        repos = [self.visible(name, authenticated=authenticated)
                 for name in searched_repos(query) or [""]]
        if any(repo is None for repo in repos):
            return None
        owner: dict[int, str] = {}
        found: list[PullRequest] = []
        with self._lock:
            for repo in repos:
                assert repo is not None
                for pull in repo.pulls.values():
                    if predicate(pull) and pull.number not in self.unindexed:
                        found.append(pull)
                        owner[id(pull)] = repo.name
        return [(owner[id(pull)], pull) for pull in sort_pulls(found, sort)]

    def cap(self, requested: int) -> int:
        return min(requested, self.page_cap) if self.page_cap else requested


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
        data = b"" if status == 304 else json.dumps(payload).encode()  # a 304 has no body
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
