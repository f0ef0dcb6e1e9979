"""A repository's recently closed PRs through GitHub's REST list, with conditional
requests, for the merge poller.

Every list request goes through the request policy the GraphQL source uses
(`bot.github.policy.RequestPolicy`: Retry-After, reset times, secondary limits, backoff
on 5xx), set never to wait for a rate limit: a limited answer raises
`RateLimitReached` with the end of the window, and the poller stays quiet until then
instead of asking again every interval.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
import requests
from github.GithubException import GithubException
from github.Requester import Requester

from bot.clock import SYSTEM_CLOCK, Clock
from bot.errors import SourceError
from bot.github.events import MergedPull, PayloadError, merge_id, pull_from_api
from bot.github.policy import RequestPolicy, RetrySettings
from bot.github.pool import PooledSource
from bot.github.source import GitHubSource
from bot.models import PullRequest

log = logging.getLogger(__name__)

POLL_RETRIES = 1
"""A 5xx or a dropped connection is retried once (after a second's backoff): the next
poll comes within minutes anyway."""


@dataclass(frozen=True)
class ClosedPage:
    """One page of a repository's closed PRs, most recently updated first.

    `not_modified`: GitHub answered 304 to the ETag, nothing changed (and the request
    did not count against the rate limit); `full`: the page was full, more may follow;
    `merged`: the merges among `pulls`, each named by its merge commit.
    """

    not_modified: bool
    etag: str | None = None
    pulls: tuple[PullRequest, ...] = ()
    full: bool = False
    merged: tuple[MergedPull, ...] = ()


def poll_policy(requester: Requester, *, token_source: str = "given",
                clock: Clock = SYSTEM_CLOCK) -> RequestPolicy:
    """The request policy of the poller's list requests: a rate limit is never waited
    for (it ends the repository's poll until its window ends), a failure retried once."""
    return RequestPolicy(requester, api_url=requester.base_url, token_source=token_source,
                         clock=clock, settings=RetrySettings(
                             retries=POLL_RETRIES, max_wait_seconds=0.0, max_rate_waits=0))


def poll_lister(source: GitHubSource | PooledSource, *,
                on_request: Callable[[str, int | str], None] | None = None
                ) -> PullLister | PooledLister:
    """The poller's lister on the source's GitHub (base URL, token or App, timeouts),
    with a requester of its own: the REST budget it tracks is the list's, so a GraphQL
    budget spent by the weekly fetches does not stop the poller, nor the reverse. A pool
    lists each repository with the credential that reads it."""
    if isinstance(source, PooledSource):
        return PooledLister(source, on_request=on_request)
    own = source.github.requester.withAuth(source.github.requester.auth)
    policy = poll_policy(own, token_source=source.policy.token_source, clock=source.clock)
    return PullLister(own, policy=policy, on_request=on_request, owns_requester=True)


class PullLister:
    """Closed PRs through GitHub's REST list, with conditional requests (`If-None-Match`).

    `requester` carries base URL, token and timeouts (the GitHub source's own, copied
    with `Requester.withAuth` so that the REST budget it tracks is the list's, not
    GraphQL's); `policy` defaults to `poll_policy` on `clock`. `on_request(api,
    status)` counts each request (see `bot.web.metrics`).
    """

    def __init__(self, requester: Requester, *, policy: RequestPolicy | None = None,
                 per_page: int = 50,
                 on_request: Callable[[str, int | str], None] | None = None,
                 owns_requester: bool = False, clock: Clock = SYSTEM_CLOCK) -> None:
        self.requester = requester
        self.policy = policy if policy is not None else poll_policy(requester, clock=clock)
        self.per_page = per_page
        self.on_request = on_request
        self.owns_requester = owns_requester

    def close(self) -> None:
        """Close the requester's connections when it is this lister's own."""
        if self.owns_requester:
            self.requester.close()

    def closed(self, repo: str, *, etag: str | None = None, page: int = 1) -> ClosedPage:
        """One page of `repo`'s closed PRs; `RateLimitReached` when GitHub limits the
        token, `SourceError` for any other failure."""
        headers = {"If-None-Match": etag} if etag else {}
        params = {"state": "closed", "sort": "updated", "direction": "desc",
                  "per_page": self.per_page, "page": page}

        def send() -> tuple[int, dict[str, Any], str]:
            try:
                status, answer_headers, body = self.requester.requestJson(
                    "GET", f"/repos/{repo}/pulls", parameters=params, headers=headers)
            except requests.RequestException:
                self._count("error")
                raise  # the policy retries it, then words it
            self._count(status)
            if status in (403, 429) or status >= 500:
                # The policy reads the status and headers: a limit, or a retry.
                raise GithubException(status, _message(body), answer_headers)
            return status, answer_headers, body

        try:
            status, answer_headers, body = self.policy.call(send)
        except GithubException as exc:  # a refusal that is not a limit (a plain 403)
            raise SourceError(f"GitHub refused the PR list of {repo} (HTTP {exc.status})"
                              ) from None
        if status == 304:
            return ClosedPage(not_modified=True, etag=etag)
        if status == 404:
            raise SourceError(f"unknown repository {repo} (it does not exist, or the token "
                              "cannot see it)")
        if status != 200:
            raise SourceError(f"GitHub refused the PR list of {repo} (HTTP {status})")
        try:
            items = msgspec.json.decode(body)
            if not isinstance(items, list):
                raise PayloadError("expected a list")
            read = [(pull_from_api(item), item) for item in items if isinstance(item, Mapping)]
        except (msgspec.DecodeError, PayloadError) as exc:
            raise SourceError(f"GitHub sent an unreadable PR list for {repo}: {exc}") from None
        lowered = {k.lower(): v for k, v in answer_headers.items()}
        merged = tuple(MergedPull(repository=repo, pull=pull, merge=merge_id(item, pull))
                       for pull, item in read if pull.state == "merged")
        return ClosedPage(not_modified=False, etag=lowered.get("etag"),
                          pulls=tuple(pull for pull, _ in read),
                          full=len(items) >= self.per_page, merged=merged)

    def _count(self, status: int | str) -> None:
        if self.on_request is not None:
            self.on_request("rest", status)


class PooledLister:
    """The poller's lists over a credential pool: each repository's on the credential
    the pool gives it, one lister per credential, made on first use."""

    def __init__(self, source: PooledSource, *,
                 on_request: Callable[[str, int | str], None] | None = None) -> None:
        self.source = source
        self.on_request = on_request
        self._listers: dict[str, PullLister] = {}
        self._lock = threading.Lock()

    def closed(self, repo: str, *, etag: str | None = None, page: int = 1) -> ClosedPage:
        member = self.source.budget.member_for(repo)
        with self._lock:
            lister = self._listers.get(member.credential.name)
            if lister is None:
                made = poll_lister(member.source, on_request=self.on_request)
                assert isinstance(made, PullLister)
                lister = self._listers[member.credential.name] = made
        return lister.closed(repo, etag=etag, page=page)

    def close(self) -> None:
        for lister in self._listers.values():
            lister.close()


def _message(body: str) -> dict[str, Any]:
    """GitHub's error body as PyGithub's exceptions carry it (its `message` read by the
    policy's rate-limit check)."""
    try:
        data = msgspec.json.decode(body or "{}")
    except msgspec.DecodeError:
        return {"message": body[:200] if isinstance(body, str) else ""}
    return data if isinstance(data, dict) else {"message": str(data)[:200]}
