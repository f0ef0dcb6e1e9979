"""A week from GitHub's REST API through PyGithub, without a token.

`RestBackend` fetches a week one PR at a time (search, then pull, files, reviews,
review comments, issue comments, combined status and check runs), each request under
the request policy (`bot.github.policy.RequestPolicy`). The search is GitHub's
advanced issue search (`advanced_search=true`): the legacy one is being removed from
`GET /search/issues`; its queries and limits are shared with the GraphQL backend.
What REST cannot tell is left `None`: whether a review thread is resolved, and
whether it is outdated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import msgspec
from github.GithubException import GithubException
from github.GithubObject import NonCompletableGithubObject
from github.PaginatedList import PaginatedList
from github.Requester import Requester

from bot.errors import SourceError
from bot.github.policy import RequestPolicy
from bot.models import (
    CheckState,
    Comment,
    FileChange,
    PullRequest,
    Review,
    ReviewThread,
    ThreadComment,
)

Progress = Callable[[int, int], None]

SEARCH_INVALID = "cannot be searched"
SEARCH_LIMIT = 1000  # GitHub search never returns more results than this
_FAILED_RUNS = {"failure", "timed_out", "cancelled", "action_required", "startup_failure",
                "stale"}


def rollup(states: Sequence[str]) -> CheckState | None:
    """One check state from REST statuses and check-run results, as GitHub's rollup."""
    if not states:
        return None
    if any(s in {"failure", "error"} for s in states):
        return "failure"
    if "pending" in states:
        return "pending"
    return "success"


def _login(user: dict[str, Any] | None) -> str | None:
    return None if user is None else str(user["login"])


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def search_window(since: datetime, until: datetime) -> str:
    """`A..B` in UTC for GitHub search; both ends inclusive, so B is one second early."""
    start = since.astimezone(UTC)
    end = (until - timedelta(seconds=1)).astimezone(UTC)
    return f"{start:%Y-%m-%dT%H:%M:%S}+00:00..{end:%Y-%m-%dT%H:%M:%S}+00:00"


def week_queries(repo: str, since: datetime, until: datetime, updated_since: datetime | None
                 ) -> list[str]:
    """The two issue searches that cover a week: closed in it, and opened in it and open.

    Merged PRs are closed at their merge time, so `closed:` finds them too.
    """
    window = search_window(since, until)
    extra = ""
    if updated_since is not None:
        extra = f" updated:>={updated_since.astimezone(UTC):%Y-%m-%dT%H:%M:%S}+00:00"
    return [
        f"repo:{repo} is:pr is:closed closed:{window}{extra}",
        f"repo:{repo} is:pr is:open created:{window}{extra}",
    ]


def too_many(repo: str, count: int) -> SourceError:
    """Rather than a week silently cut at GitHub's search limit."""
    return SourceError(
        f"{repo}: {count} PRs match one search of the week, but GitHub search returns at "
        f"most {SEARCH_LIMIT}"
    )


class UnknownRepository(SourceError):
    """GitHub knows no such repository, or not for this credential (a private one it
    cannot read): another credential may."""


def unknown_repository(repo: str) -> SourceError:
    return UnknownRepository(
        f"unknown repository {repo} (it does not exist, or the token cannot see it)"
    )


class RawItem(NonCompletableGithubObject):
    """One list item as GitHub sent it.

    PyGithub's typed objects fetch the whole object again when code reads an
    attribute the list answer lacked (a root review comment has no
    `in_reply_to_id`), one hidden request per item; the raw JSON never does.
    """

    def _initAttributes(self) -> None:
        """Nothing to declare: the JSON is read through `raw_data`."""

    def _useAttributes(self, attributes: dict[str, Any]) -> None:
        """Nothing to convert: the JSON is read through `raw_data`."""


class RestBackend:
    """A week through REST, one PR at a time: slow, but needs no token."""

    def __init__(self, requester: Requester, policy: RequestPolicy, progress: Progress | None
                 ) -> None:
        self.requester = requester
        self.policy = policy
        self.progress = progress

    def _list(self, path: str, params: dict[str, Any] | None = None, *, item: str = "items"
              ) -> list[dict[str, Any]]:
        """Every page of a list endpoint (PyGithub follows the `Link` headers)."""
        pages = PaginatedList(RawItem, self.requester, path, params, list_item=item)
        return [element.raw_data for element in self.policy.call(lambda: list(pages))]

    def _get(self, path: str) -> dict[str, Any]:
        _, data = self.policy.call(lambda: self.requester.requestJsonAndCheck("GET", path))
        return dict(data)

    def search(
        self,
        repo: str,
        since: datetime,
        until: datetime,
        *,
        updated_since: datetime | None = None,
        recheck: Sequence[int] = (),
    ) -> tuple[list[PullRequest], list[PullRequest]]:
        """Full PRs found by the week's searches, and state-only heads for `recheck`."""
        numbers: dict[int, None] = {}
        for query in week_queries(repo, since, until, updated_since):
            pages = PaginatedList(RawItem, self.requester, "/search/issues",
                                  {"q": query, "advanced_search": "true"})
            try:
                found: list[RawItem] = self.policy.call(partial(list, pages))
            except GithubException as exc:
                if exc.status == 422 and SEARCH_INVALID in str(exc.data):
                    raise unknown_repository(repo) from None
                raise SourceError(f"GitHub search failed ({exc.status} {exc.message})") from None
            if pages.totalCount > SEARCH_LIMIT:
                raise too_many(repo, pages.totalCount)
            numbers.update(dict.fromkeys(int(item.raw_data["number"]) for item in found))
        pulls = self.pulls(repo, list(numbers))
        # A PR the searches found is already known in full; ask only for the others.
        heads = [self._pull(repo, number) for number in recheck if number not in numbers]
        return pulls, [_head(p) for p in heads if p is not None]

    def pulls(self, repo: str, numbers: Sequence[int]) -> list[PullRequest]:
        """Full records of `numbers`; numbers that are not PRs are left out."""
        out = []
        for done, number in enumerate(numbers, start=1):
            pull = self.pull(repo, number)
            if pull is not None:
                out.append(pull)
            if self.progress:
                self.progress(done, len(numbers))
        return out

    def _pull(self, repo: str, number: int) -> dict[str, Any] | None:
        try:
            return self._get(f"/repos/{repo}/pulls/{int(number)}")
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise SourceError(f"GitHub refused PR #{number} ({exc.status} {exc.message})"
                              ) from None

    def pull(self, repo: str, number: int) -> PullRequest | None:
        """One PR with everything REST can tell about it; None when it is not a PR."""
        pull = self._pull(repo, number)
        if pull is None:
            return None
        api = f"/repos/{repo}/pulls/{int(number)}"
        sha = pull["head"]["sha"]
        try:
            files = self._list(f"{api}/files")
            reviews = self._list(f"{api}/reviews")
            review_comments = self._list(f"{api}/comments")
            issue_comments = self._list(f"/repos/{repo}/issues/{int(number)}/comments")
            combined = self._get(f"/repos/{repo}/commits/{sha}/status")
            runs = self._list(f"/repos/{repo}/commits/{sha}/check-runs", item="check_runs")
        except GithubException as exc:
            raise SourceError(
                f"GitHub refused the details of PR #{number} ({exc.status} {exc.message})"
            ) from None
        states = [combined["state"]] if combined.get("total_count") else []
        for run in runs:
            if run.get("status") != "completed":
                states.append("pending")
            else:
                states.append("failure" if run.get("conclusion") in _FAILED_RUNS else "success")
        return msgspec.structs.replace(
            _head(pull),
            author=_login(pull.get("user")),
            draft=pull.get("draft"),
            base=(pull.get("base") or {}).get("ref"),
            labels=tuple(label["name"] for label in pull.get("labels") or ()),
            body=pull.get("body") or None,
            additions=pull.get("additions"),
            deletions=pull.get("deletions"),
            changed_files=pull.get("changed_files"),
            files=tuple(
                FileChange(path=f["filename"], additions=f.get("additions", 0),
                           deletions=f.get("deletions", 0), status=f.get("status"))
                for f in files
            ),
            reviews=tuple(
                Review(author=_login(r.get("user")), state=r["state"],
                       submitted_at=_time(r.get("submitted_at")), body=r.get("body"))
                for r in reviews
            ),
            review_threads=_threads(review_comments),
            comments=tuple(
                Comment(author=_login(c.get("user")), body=c.get("body"),
                        created_at=_time(c.get("created_at")))
                for c in issue_comments
            ),
            checks=rollup(states),
            author_association=pull.get("author_association") or msgspec.UNSET,
        )


def _threads(comments: Sequence[dict[str, Any]]) -> tuple[ReviewThread, ...]:
    """Review comments grouped into threads by the comment they reply to.

    REST says nothing reliable about resolution or outdatedness: both stay None.
    """
    replies: dict[int, list[dict[str, Any]]] = {}
    for comment in comments:
        parent = comment.get("in_reply_to_id")
        if parent is None or parent not in replies:
            replies[comment["id"]] = [comment]
        else:
            replies[parent].append(comment)
    threads = []
    for thread in replies.values():
        root = thread[0]
        threads.append(ReviewThread(
            path=root.get("path"),
            line=root["line"] if root.get("line") is not None else root.get("original_line"),
            resolved=None,
            outdated=None,
            comments=tuple(
                ThreadComment(author=_login(c.get("user")), body=c.get("body"),
                              created_at=_time(c.get("created_at")), url=c.get("html_url"))
                for c in thread
            ),
        ))
    return tuple(threads)


def _head(pull: dict[str, Any]) -> PullRequest:
    """The state and dates of a PR, enough to tell which week it belongs to."""
    merged = pull.get("merged_at") is not None
    return PullRequest(
        number=int(pull["number"]),
        title=str(pull.get("title") or ""),
        url=str(pull.get("html_url") or ""),
        state="merged" if merged else ("open" if pull.get("state") == "open" else "closed"),
        created_at=_time(pull.get("created_at")),
        updated_at=_time(pull.get("updated_at")),
        merged_at=_time(pull.get("merged_at")),
        closed_at=_time(pull.get("closed_at")),
    )
