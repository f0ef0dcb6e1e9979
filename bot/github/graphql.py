"""A week of PRs through GitHub's GraphQL API, priced in GitHub's points.

GitHub charges a query by its connections: one request per connection per node of the
connections above it, /100 (see `testkit.fakes.github_points`). So a week is read in
two steps that keep nested lists off the search:
1. the week's two searches (closed in the week; opened in it and still open) ask only
   for PR numbers, 100 a page: one point a request;
2. the PRs found are fetched by number, 50 per request, each with small first pages of
   its nested lists (10 review threads of 10 comments, ...): 16 requests per PR.
Lists that overflow are collected and fetched afterwards in batched follow-up queries
(one alias per PR or thread, many per request, each page sized by the list's
`totalCount`), only for the PRs whose `pageInfo.hasNextPage` says there is more, until
no list has a next page. A week of 30 PRs costs 6 points or so where one search
carrying `reviewThreads(first: 50) { comments(first: 20) }` cost about 40.

Every request also asks for `rateLimit`, and the budget (`bot.github.budget`) keeps
what GitHub answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
from github.GithubException import GithubException
from github.Requester import Requester

from bot.errors import SourceError
from bot.github.budget import Budget
from bot.github.policy import RateLimited, RequestPolicy
from bot.github.queries import (
    FIRST,
    FRAGMENT_OF,
    NEXT_PAGE,
    RATE_LIMIT,
    document,
)
from bot.github.rest import (
    SEARCH_INVALID,
    SEARCH_LIMIT,
    Progress,
    too_many,
    unknown_repository,
    week_queries,
)
from bot.models import (
    CheckState,
    Comment,
    FileChange,
    PullRequest,
    Review,
    ReviewThread,
    ThreadComment,
)

PAGE_SIZE = 50
"""PRs fetched in full per request."""
SEARCH_PAGE = 100
"""PR numbers per search page: a page without nested lists costs one request."""
FOLLOW_UP_SIZE = 100
MAX_ALIASES = 40

CHANGE_STATUS = {"ADDED": "added", "DELETED": "removed", "MODIFIED": "modified",
                 "RENAMED": "renamed", "COPIED": "copied", "CHANGED": "changed"}
CHECK_STATE: dict[str, CheckState] = {
    "SUCCESS": "success", "FAILURE": "failure", "ERROR": "failure",
    "PENDING": "pending", "EXPECTED": "pending",
}
PULL_STATE = {"MERGED": "merged", "CLOSED": "closed", "OPEN": "open"}


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _login(actor: dict[str, Any] | None) -> str | None:
    """REST's spelling: GraphQL drops the `[bot]` suffix of app accounts, REST keeps it."""
    if actor is None:
        return None
    login = str(actor["login"])
    return f"{login}[bot]" if actor.get("__typename") == "Bot" else login


@dataclass
class _Thread:
    id: str
    node: dict[str, Any]
    comments: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Pull:
    """One PR being assembled from its first page and any follow-up pages."""

    node: dict[str, Any]
    lists: dict[str, list[Any]] = field(default_factory=dict)
    threads: list[_Thread] = field(default_factory=list)

    def build(self) -> PullRequest:
        n = self.node
        commits = (n.get("commits") or {}).get("nodes") or []
        rollup = ((commits[-1] or {}).get("commit") or {}).get("statusCheckRollup") if commits \
            else None
        return PullRequest(
            number=n["number"],
            title=n["title"],
            url=n["url"],
            author=_login(n.get("author")),
            state=PULL_STATE[n["state"]],  # type: ignore[arg-type]
            draft=n.get("isDraft"),
            created_at=_time(n.get("createdAt")),
            updated_at=_time(n.get("updatedAt")),
            merged_at=_time(n.get("mergedAt")),
            closed_at=_time(n.get("closedAt")),
            base=n.get("baseRefName"),
            labels=tuple(label["name"] for label in self.lists["labels"]),
            body=n.get("body") or None,
            additions=n.get("additions"),
            deletions=n.get("deletions"),
            changed_files=n.get("changedFiles"),
            files=tuple(
                FileChange(path=f["path"], additions=f["additions"], deletions=f["deletions"],
                           status=CHANGE_STATUS.get(f["changeType"], f["changeType"].lower()))
                for f in self.lists["files"]
            ),
            reviews=tuple(
                Review(author=_login(r.get("author")), state=r["state"],
                       submitted_at=_time(r.get("submittedAt")), body=r.get("body"))
                for r in self.lists["reviews"]
            ),
            review_threads=tuple(
                ReviewThread(
                    path=t.node.get("path"),
                    line=t.node["line"] if t.node.get("line") is not None
                    else t.node.get("originalLine"),
                    resolved=t.node.get("isResolved"),
                    outdated=t.node.get("isOutdated"),
                    comments=tuple(
                        ThreadComment(author=_login(c.get("author")), body=c.get("body"),
                                      created_at=_time(c.get("createdAt")), url=c.get("url"))
                        for c in t.comments
                    ),
                )
                for t in self.threads
            ),
            comments=tuple(
                Comment(author=_login(c.get("author")), body=c.get("body"),
                        created_at=_time(c.get("createdAt")))
                for c in self.lists["comments"]
            ),
            checks=CHECK_STATE.get(rollup["state"]) if rollup else None,
            author_association=n.get("authorAssociation") or msgspec.UNSET,
        )


def head(node: dict[str, Any]) -> PullRequest:
    """State and dates only: enough to tell which week a PR belongs to now."""
    return PullRequest(
        number=node["number"], title="", url="",
        state=PULL_STATE[node["state"]],  # type: ignore[arg-type]
        created_at=_time(node.get("createdAt")), updated_at=_time(node.get("updatedAt")),
        merged_at=_time(node.get("mergedAt")), closed_at=_time(node.get("closedAt")),
    )


class GraphQLBackend:
    """Week searches and batched PR fetches through `Requester` (PyGithub's public API)."""

    def __init__(
        self,
        requester: Requester,
        policy: RequestPolicy,
        progress: Progress | None,
        *,
        page_size: int = PAGE_SIZE,
        budget: Budget | None = None,
    ) -> None:
        self.requester = requester
        self.policy = policy
        self.progress = progress
        self.page_size = page_size
        self.budget = budget if budget is not None else Budget()

    # -- transport --

    def _run(self, repo: str, name: str, params: Sequence[str], fields: Sequence[str],
             variables: dict[str, Any]) -> dict[str, Any]:
        """One operation with the budget's `rateLimit` asked alongside."""
        signature = f"({', '.join(params)})" if params else ""
        body = f"query {name}{signature} {{ {RATE_LIMIT} {' '.join(fields)} }}"
        return self._query(repo, document(body), variables)

    def _query(self, repo: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """POST one document; return `data`, or raise a `SourceError` that says why not."""

        def send() -> dict[str, Any]:
            headers, answer = self.requester.requestJsonAndCheck(
                "POST", self.requester.graphql_url,
                input={"query": query, "variables": variables},
            )
            errors = (answer or {}).get("errors") or []
            limited = [e for e in errors if e.get("type") == "RATE_LIMITED"]
            if limited:
                raise RateLimited(headers, str(limited[0].get("message", "rate limited")))
            return dict(answer or {})

        try:
            answer = self.policy.call(send)
        except GithubException as exc:
            raise SourceError(f"GitHub GraphQL request failed ({exc.status} {exc.message})"
                              ) from None
        rate = (answer.get("data") or {}).get("rateLimit")
        if isinstance(rate, dict):
            self.budget.record(rate)
        errors = answer.get("errors") or []
        for error in errors:
            missing_repo = error.get("type") == "NOT_FOUND" and error.get("path") == ["repository"]
            if missing_repo or SEARCH_INVALID in str(error.get("message")):
                raise unknown_repository(repo)
        hard = [e for e in errors if e.get("type") != "NOT_FOUND"]
        if hard or answer.get("data") is None:
            messages = "; ".join(str(e.get("message")) for e in (hard or errors)) or "no data"
            raise SourceError(f"GitHub GraphQL error: {messages}")
        return dict(answer["data"])

    # -- public --

    def query(self, repo: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """One document (asking `rateLimit` itself) sent through the request policy and
        priced in the budget: its `data`, or a `SourceError` that says why not."""
        return self._query(repo, query, variables)

    def search(
        self,
        repo: str,
        since: datetime,
        until: datetime,
        *,
        updated_since: datetime | None = None,
        recheck: Sequence[int] = (),
        counted: bool = False,
    ) -> tuple[list[PullRequest], list[PullRequest]]:
        """Full PRs found by the week's searches, and state-only heads for `recheck`.

        The searches ask for numbers only; heads ride along in the first search request
        (up to `MAX_ALIASES`); the PRs found are then fetched in full (`pulls`), or
        with only what their topics are told from when `counted`.
        """
        owner, name = repo.split("/", 1)
        queries = week_queries(repo, since, until, updated_since)
        cursors: dict[int, str | None] = dict.fromkeys(range(len(queries)))
        numbers: dict[int, None] = {}
        heads: list[PullRequest] = []
        recheck = list(recheck)
        first = True
        total = 0
        while cursors or recheck:
            variables: dict[str, Any] = {"owner": owner, "name": name}
            params = ["$owner: String!", "$name: String!"]
            fields = []
            for index, cursor in cursors.items():
                params += [f"$q{index}: String!", f"$a{index}: String"]
                variables[f"q{index}"] = queries[index]
                variables[f"a{index}"] = cursor
                fields.append(
                    f"s{index}: search(query: $q{index}, type: ISSUE, first: {SEARCH_PAGE},"
                    f" after: $a{index}) {{ issueCount {NEXT_PAGE}"
                    f" nodes {{ __typename ... on PullRequest {{ number }} }} }}"
                )
            batch, recheck = recheck[:MAX_ALIASES], recheck[MAX_ALIASES:]
            inner = " ".join(f"h{n}: pullRequest(number: {int(n)}) {{ ...Head }}" for n in batch)
            fields.insert(0, f"repository(owner: $owner, name: $name) {{ nameWithOwner {inner} }}")
            data = self._run(repo, "Week", params, fields, variables)
            repository = data.get("repository") or {}
            heads.extend(head(repository[f"h{n}"]) for n in batch if repository.get(f"h{n}"))
            next_cursors: dict[int, str | None] = {}
            for index in cursors:
                page = data[f"s{index}"]
                if first:
                    total += int(page["issueCount"])
                    if page["issueCount"] > SEARCH_LIMIT:
                        raise too_many(repo, int(page["issueCount"]))
                for node in page["nodes"] or []:
                    if node and node.get("__typename") == "PullRequest":
                        numbers[int(node["number"])] = None
                if page["pageInfo"]["hasNextPage"]:
                    next_cursors[index] = page["pageInfo"]["endCursor"]
            cursors = next_cursors
            first = False
            if self.progress:
                self.progress(0, max(total, len(numbers)))
        found = self.pulls(repo, list(numbers), counted=counted) if numbers else []
        return found, heads

    def pulls(self, repo: str, numbers: Sequence[int], *, counted: bool = False
              ) -> list[PullRequest]:
        """Full records of `numbers`, `page_size` PRs per request; unknown numbers are
        left out. `counted`: only title, body, labels and files (the `Counted`
        fragment: 2 of GitHub's requests a PR against 16); what was not read is None."""
        fragment = "Counted" if counted else "Pull"
        owner, name = repo.split("/", 1)
        found: list[_Pull] = []
        numbers = list(dict.fromkeys(numbers))
        for start in range(0, len(numbers), self.page_size):
            batch = numbers[start:start + self.page_size]
            inner = " ".join(f"p{n}: pullRequest(number: {int(n)}) {{ ...{fragment} }}"
                             for n in batch)
            data = self._run(
                repo, "Pulls", ["$owner: String!", "$name: String!"],
                [f"repository(owner: $owner, name: $name) {{ nameWithOwner {inner} }}"],
                {"owner": owner, "name": name})
            repository = data.get("repository") or {}
            found.extend(self._start(repository[f"p{n}"]) for n in batch
                         if repository.get(f"p{n}"))
            if self.progress:
                self.progress(min(start + self.page_size, len(numbers)), len(numbers))
        self._follow_up(repo, found)
        if counted:
            return [msgspec.structs.replace(pull.build(), reviews=None, review_threads=None,
                                            comments=None, checks=None) for pull in found]
        return [pull.build() for pull in found]

    # -- assembling --

    def _start(self, node: dict[str, Any]) -> _Pull:
        pull = _Pull(node=node)
        for key in FIRST:
            connection = node.get(key) or {"nodes": [], "pageInfo": {"hasNextPage": False}}
            if key == "reviewThreads":
                pull.threads.extend(self._thread(t) for t in connection["nodes"] or [] if t)
            else:
                pull.lists[key] = [item for item in connection["nodes"] or [] if item]
        return pull

    @staticmethod
    def _thread(node: dict[str, Any]) -> _Thread:
        comments = node.get("comments") or {}
        return _Thread(id=node["id"], node=node,
                       comments=[c for c in comments.get("nodes") or [] if c])

    def _follow_up(self, repo: str, pulls: list[_Pull]) -> None:
        """Fetch every further page of every overflowing list, batched across PRs."""
        owner, name = repo.split("/", 1)
        pull_pages: list[_PullPage] = []
        thread_pages: list[_ThreadPage] = []
        for pull in pulls:
            _pending(pull, pull.node, pull_pages, thread_pages, pull.threads)
        while pull_pages or thread_pages:
            by_pull: dict[int, list[_PullPage]] = {}
            for item in pull_pages:
                by_pull.setdefault(item[0].node["number"], []).append(item)
            pull_groups = list(by_pull.values())
            take_pulls = pull_groups[:MAX_ALIASES]
            take_threads = thread_pages[:MAX_ALIASES - len(take_pulls)]
            pull_pages = [item for group in pull_groups[len(take_pulls):] for item in group]
            thread_pages = thread_pages[len(take_threads):]

            variables: dict[str, Any] = {}
            params: list[str] = []
            fields: list[str] = []
            inner: list[str] = []
            for group in take_pulls:
                number = group[0][0].node["number"]
                parts = []
                for _, key, cursor, size in group:
                    var = f"c{len(variables)}"
                    variables[var] = cursor
                    params.append(f"${var}: String")
                    parts.append(f"{key}(first: {int(size)}, after: ${var}) "
                                 f"{{ ...{FRAGMENT_OF[key]} }}")
                inner.append(f"p{int(number)}: pullRequest(number: {int(number)}) "
                             f"{{ {' '.join(parts)} }}")
            if inner:
                variables.update(owner=owner, name=name)
                params += ["$owner: String!", "$name: String!"]
                fields.append(f"repository(owner: $owner, name: $name) {{ {' '.join(inner)} }}")
            for index, (thread, cursor, size) in enumerate(take_threads):
                variables[f"t{index}"] = thread.id
                variables[f"tc{index}"] = cursor
                params += [f"$t{index}: ID!", f"$tc{index}: String"]
                fields.append(
                    f"t{index}: node(id: $t{index}) {{ ... on PullRequestReviewThread {{ "
                    f"comments(first: {int(size)}, after: $tc{index}) "
                    f"{{ ...ThreadComments }} }} }}"
                )
            data = self._run(repo, "More", params, fields, variables)
            repository = data.get("repository") or {}
            for group in take_pulls:
                pull = group[0][0]
                node = repository.get(f"p{pull.node['number']}") or {}
                new_threads: list[_Thread] = []
                for _, key, _cursor, _size in group:
                    connection = node.get(key) or {}
                    items = [i for i in connection.get("nodes") or [] if i]
                    if key == "reviewThreads":
                        fresh = [self._thread(t) for t in items]
                        pull.threads.extend(fresh)
                        new_threads.extend(fresh)
                    else:
                        pull.lists[key].extend(items)
                _pending(pull, node, pull_pages, thread_pages, new_threads)
            for index, (thread, _cursor, _size) in enumerate(take_threads):
                connection = (data.get(f"t{index}") or {}).get("comments") or {}
                thread.comments.extend(c for c in connection.get("nodes") or [] if c)
                info = connection.get("pageInfo") or {}
                if info.get("hasNextPage"):
                    thread_pages.append((thread, info["endCursor"],
                                         _left(connection, len(thread.comments))))


_PullPage = tuple[_Pull, str, str, int]
"""A PR's list still to fetch: (PR, list name, cursor, page size)."""
_ThreadPage = tuple[_Thread, str, int]
"""A thread's comments still to fetch: (thread, cursor, page size)."""


def _left(connection: dict[str, Any], have: int) -> int:
    """The next page's size: what the list's `totalCount` says is left, at most a page.
    Asking for no more than is there keeps a nested page's price down."""
    total = connection.get("totalCount")
    left = int(total) - have if isinstance(total, int) else FOLLOW_UP_SIZE
    return max(1, min(FOLLOW_UP_SIZE, left))


def _pending(
    pull: _Pull,
    node: dict[str, Any],
    pull_pages: list[_PullPage],
    thread_pages: list[_ThreadPage],
    threads: list[_Thread],
) -> None:
    """Queue the next page of each list in `node` that has one, and of each thread's
    comments among `threads`."""
    for key in FIRST:
        connection = node.get(key) or {}
        info = connection.get("pageInfo") or {}
        if info.get("hasNextPage"):
            have = len(pull.threads) if key == "reviewThreads" else len(pull.lists[key])
            pull_pages.append((pull, key, info["endCursor"], _left(connection, have)))
    for thread in threads:
        connection = thread.node.get("comments") or {}
        info = connection.get("pageInfo") or {}
        if info.get("hasNextPage"):
            thread_pages.append((thread, info["endCursor"],
                                 _left(connection, len(thread.comments))))
