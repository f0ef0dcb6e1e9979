"""A repository's recently closed PRs through GitHub's REST list, with conditional
requests, for the merge poller."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import msgspec
import requests
from github.GithubException import GithubException
from github.Requester import Requester

from bot.errors import SourceError
from bot.github.events import PayloadError, pull_from_api
from bot.models import PullRequest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClosedPage:
    """One page of a repository's closed PRs, most recently updated first.

    `not_modified`: GitHub answered 304 to the ETag, nothing changed (and the request
    did not count against the rate limit); `full`: the page was full, more may follow.
    """

    not_modified: bool
    etag: str | None = None
    pulls: tuple[PullRequest, ...] = ()
    full: bool = False


class PullLister:
    """Closed PRs through GitHub's REST list, with conditional requests (`If-None-Match`).

    Uses the GitHub source's PyGithub requester, so base URL, token and timeouts are the
    source's own. `on_request(api, status)` counts each request (see `bot.web.metrics`).
    """

    def __init__(self, requester: Requester, *, per_page: int = 50,
                 on_request: Callable[[str, int | str], None] | None = None) -> None:
        self.requester = requester
        self.per_page = per_page
        self.on_request = on_request

    def closed(self, repo: str, *, etag: str | None = None, page: int = 1) -> ClosedPage:
        headers = {"If-None-Match": etag} if etag else {}
        params = {"state": "closed", "sort": "updated", "direction": "desc",
                  "per_page": self.per_page, "page": page}
        try:
            status, answer_headers, body = self.requester.requestJson(
                "GET", f"/repos/{repo}/pulls", parameters=params, headers=headers)
        except (requests.RequestException, GithubException) as exc:
            self._count("error")
            raise SourceError(f"cannot list the PRs of {repo} ({type(exc).__name__})") from None
        self._count(status)
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
            pulls = tuple(pull_from_api(item) for item in items if isinstance(item, Mapping))
        except (msgspec.DecodeError, PayloadError) as exc:
            raise SourceError(f"GitHub sent an unreadable PR list for {repo}: {exc}") from None
        lowered = {k.lower(): v for k, v in answer_headers.items()}
        return ClosedPage(not_modified=False, etag=lowered.get("etag"), pulls=pulls,
                          full=len(items) >= self.per_page)

    def _count(self, status: int | str) -> None:
        if self.on_request is not None:
            self.on_request("rest", status)
