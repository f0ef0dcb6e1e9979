"""GitHub over HTTP through PyGithub: the request policy and the REST fallback.

`RequestPolicy` wraps every call the sources make (GraphQL or REST): it retries
5xx answers and network failures with backoff, waits out a rate limit whose reset
is near and otherwise fails with the reset time, and turns the rest into one-line
`SourceError`s. PyGithub's own retry is switched off (`retry=None`) so that waits
are decided here, once, and tests can inject the sleep.

`RestBackend` fetches a week without a token, one PR at a time (search, then pull,
files, reviews, review comments, issue comments, combined status and check runs). The
search is GitHub's advanced issue search (`advanced_search=true`): the legacy one is
being removed from `GET /search/issues`.
What REST cannot tell is left `None`: whether a review thread is resolved, and
whether it is outdated.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

import msgspec
import requests
from github.GithubException import (
    BadCredentialsException,
    GithubException,
    RateLimitExceededException,
)
from github.GithubObject import NonCompletableGithubObject
from github.PaginatedList import PaginatedList
from github.Requester import Requester
from urllib3.exceptions import NameResolutionError

from bot.errors import SourceError
from bot.models import (
    CheckState,
    Comment,
    FileChange,
    PullRequest,
    Review,
    ReviewThread,
    ThreadComment,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
Progress = Callable[[int, int], None]

SEARCH_INVALID = "cannot be searched"
SEARCH_LIMIT = 1000  # GitHub search never returns more results than this
_FAILED_RUNS = {"failure", "timed_out", "cancelled", "action_required", "startup_failure",
                "stale"}


class RateLimited(Exception):
    """A rate limit reported inside a 200 answer (GraphQL's RATE_LIMITED error)."""

    def __init__(self, headers: dict[str, Any], message: str) -> None:
        super().__init__(message)
        self.headers = headers


class RateLimitReached(SourceError):
    """GitHub's rate limit, not waited for: `wait_seconds` is how long until its window
    ends (the reset time, or Retry-After), so a caller can stay quiet until then."""

    def __init__(self, message: str, *, wait_seconds: float) -> None:
        super().__init__(message)
        self.wait_seconds = wait_seconds


class RequestPolicy:
    """Retries, rate-limit waits and error wording around each PyGithub call.

    `max_wait_seconds`: a reset (or Retry-After) at most this far away is waited
    for; a later one fails at once with the reset time in UTC. `on_retry(reason,
    delay)` hears of each retry before its wait (a command line says it is retrying);
    `retry_unresolved=False` fails at once when GitHub's host name does not resolve
    (offline, or a mistyped `github.api_url`), where waiting rarely helps a command.
    """

    def __init__(
        self,
        requester: Requester,
        *,
        api_url: str,
        token_source: str,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
        retries: int = 3,
        backoff_seconds: float = 1.0,
        max_wait_seconds: float = 60.0,
        max_rate_waits: int = 3,
        on_retry: Callable[[str, float], None] | None = None,
        retry_unresolved: bool = True,
    ) -> None:
        self.requester = requester
        self.on_retry = on_retry
        self.retry_unresolved = retry_unresolved
        self.api_url = api_url
        self.token_source = token_source
        self.sleep = sleep
        self.clock = clock
        self.retries = retries
        self.backoff_seconds = backoff_seconds
        self.max_wait_seconds = max_wait_seconds
        self.max_rate_waits = max_rate_waits
        self.slept: list[float] = []

    def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` (one or more requests) under the policy; return its result."""
        failures = 0
        waits = 0
        while True:
            self._respect_budget()
            try:
                return fn()
            except RateLimited as exc:
                delay = self._rate_delay(exc.headers, str(exc), waits)
                waits, why = waits + 1, "rate limited"
            except RateLimitExceededException as exc:
                delay = self._rate_delay(exc.headers or {}, exc.message or "", waits)
                waits, why = waits + 1, "rate limited"
            except BadCredentialsException as exc:
                raise SourceError(
                    f"GitHub rejected the token {self.token_source} "
                    f"({exc.status} {exc.message or 'Bad credentials'})"
                ) from None
            except GithubException as exc:
                if exc.status == 429 or (exc.status == 403 and _looks_limited(exc)):
                    delay = self._rate_delay(exc.headers or {}, exc.message or "", waits)
                    waits, why = waits + 1, "rate limited"
                elif exc.status == 401:
                    raise SourceError(
                        f"GitHub rejected the token {self.token_source} "
                        f"({exc.status} {exc.message or 'Unauthorized'})"
                    ) from None
                elif exc.status >= 500:
                    failures += 1
                    why = f"{exc.status} {exc.message or 'server error'}"
                    if failures > self.retries:
                        raise SourceError(
                            f"GitHub keeps failing ({why}) after {failures} attempts; try "
                            "again later") from None
                    delay = _retry_after(exc.headers or {}) or self._backoff(failures)
                else:
                    raise
            except (requests.Timeout, requests.ConnectionError,
                    requests.exceptions.ChunkedEncodingError) as exc:
                failures += 1
                why = _network_reason(exc)
                if why == HOST_NOT_FOUND and not self.retry_unresolved:
                    raise SourceError(f"cannot reach GitHub at {self.api_url} ({why})") from None
                if failures > self.retries:
                    raise SourceError(
                        f"cannot reach GitHub at {self.api_url} ({why}) "
                        f"after {failures} attempts"
                    ) from None
                delay = self._backoff(failures)
            except requests.RequestException as exc:
                raise SourceError(
                    f"cannot talk to GitHub at {self.api_url} ({type(exc).__name__})"
                ) from None
            log.info("GitHub request failed (%s); retrying in %.1f s", why, delay)
            if self.on_retry is not None:
                self.on_retry(why, delay)
            self.slept.append(delay)
            self.sleep(delay)
            if waits:
                self._forget_budget()

    def _backoff(self, failures: int) -> float:
        return float(self.backoff_seconds * 2 ** (failures - 1))

    def _respect_budget(self) -> None:
        """Before a request: when the last answer left no budget, wait or fail now."""
        remaining, _ = self.requester.rate_limiting
        reset = self.requester.rate_limiting_resettime
        if remaining == 0 and reset > self.clock():
            delay = self._rate_delay({"x-ratelimit-reset": str(reset)}, "budget spent", 0)
            self.slept.append(delay)
            self.sleep(delay)
            self._forget_budget()

    def _forget_budget(self) -> None:
        """After waiting for a reset, the last answer's budget no longer holds; the next
        answer brings the new one."""
        self.requester.rate_limiting = (-1, -1)

    def _rate_delay(self, headers: dict[str, Any], message: str, waits: int) -> float:
        """Seconds to wait for a rate limit, or `RateLimitReached` naming its reset."""
        now = self.clock()
        headers = {k.lower(): v for k, v in headers.items()}
        delay = _retry_after(headers)
        reset_header = headers.get("x-ratelimit-reset")
        if delay is None and reset_header is not None:
            delay = max(float(reset_header) - now, 0.0) + 1.0
        if delay is None:
            delay = 60.0  # GitHub's advice for a secondary limit without headers
        if delay > self.max_wait_seconds or waits >= self.max_rate_waits:
            reset = datetime.fromtimestamp(now + delay, UTC).replace(microsecond=0)
            minutes = max(round(delay / 60), 1)
            raise RateLimitReached(
                f"GitHub rate limit reached ({message.rstrip('.') or 'limited'}); it resets at "
                f"{reset:%Y-%m-%d %H:%M:%S} UTC, in about {minutes} min", wait_seconds=delay)
        return delay


def _retry_after(headers: dict[str, Any]) -> float | None:
    value = {k.lower(): v for k, v in headers.items()}.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _looks_limited(exc: GithubException) -> bool:
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    message = (exc.message or "").lower()
    return (
        headers.get("x-ratelimit-remaining") == "0"
        or "retry-after" in headers
        or "rate limit" in message
    )


HOST_NOT_FOUND = "host not found"


def _network_reason(exc: Exception) -> str:
    if isinstance(exc, requests.Timeout):
        return "timed out"
    if _unresolved(exc):
        return HOST_NOT_FOUND
    text = str(exc)
    for needle, reason in (
        ("Connection refused", "connection refused"),
        ("Network is unreachable", "network unreachable"),
    ):
        if needle in text:
            return reason
    return type(exc).__name__


def _unresolved(exc: BaseException) -> bool:
    """Whether the failure is a host name that did not resolve: urllib3's
    `NameResolutionError` (or the `socket.gaierror` under it) anywhere in the chain
    requests wraps it in."""
    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, NameResolutionError | socket.gaierror):
            return True
        todo += [*item.args, item.__cause__, item.__context__, getattr(item, "reason", None)]
    return False


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


def unknown_repository(repo: str) -> SourceError:
    return SourceError(
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
