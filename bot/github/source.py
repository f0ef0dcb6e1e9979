"""The GitHub source: a week of PRs from GitHub, as a `Snapshot`.

With a token it asks GraphQL (a few batched requests per week, see
`bot.github.graphql`); without one it falls back to REST, one PR at a time, which
works for public repositories only and cannot tell whether review threads are
resolved. Search windows are computed from the week's local boundaries in the
repository's time zone and the result is filtered precisely with `bot.week`.

The cache (`bot.store.cache`) uses `fetch_changes` and `fetch_pulls` to refresh a week it
already holds, asking only for what changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol
from urllib.parse import urlsplit

import msgspec
import requests
from github import Auth, Github
from github.GithubException import GithubException
from github.Requester import Requester

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, ConfigView, secret
from bot.errors import SourceError
from bot.github.app import APP_ID_ENV, InstallationAuth, app_credentials
from bot.github.budget import Budget
from bot.github.graphql import PAGE_SIZE, GraphQLBackend
from bot.github.lookups import Lookups
from bot.github.policy import DEFAULT_RETRY, RequestPolicy, RetrySettings
from bot.github.rest import RestBackend
from bot.models import Period, PullRequest, Snapshot
from bot.source import RepoFacts, ReviewQueue
from bot.week import belongs_to_week, week_period


class WeekChanges(msgspec.Struct, frozen=True, kw_only=True):
    """What changed in a week since a moment.

    `pulls`: full records of PRs in the week's search windows updated since then (not
    yet filtered by week); `heads`: state and dates of the PRs asked to be rechecked.
    """

    pulls: tuple[PullRequest, ...]
    heads: tuple[PullRequest, ...]
    fetched_at: datetime


class _Backend(Protocol):
    def search(
        self, repo: str, since: datetime, until: datetime, *,
        updated_since: datetime | None = None, recheck: Sequence[int] = (),
    ) -> tuple[list[PullRequest], list[PullRequest]]: ...

    def pulls(self, repo: str, numbers: Sequence[int]) -> list[PullRequest]: ...


class GitHubSource:
    """Fetches a repository's week of PRs from GitHub (GraphQL, or REST without a token).

    `clock` tells the time (when a rate limit resets, when a fetch was made) and lets
    the retries and rate-limit waits pass (a test's virtual clock: at once, recorded
    in its `slept`); a `HeldClock` would misjudge GitHub's reset times, so a process
    holding the date reads snapshots, not GitHub. `retry` says how failures and rate
    limits are met (`bot.github.policy.RetrySettings`); `on_request(api, status)` is
    told of every HTTP request ("graphql"/"rest", the status or "error" when no answer
    came), for metrics; `budget` keeps the GraphQL
    points GitHub reports (one per identity; a new one when not given). Without a
    `token` given, a GitHub App in the environment (`bot.github.app`) is used when
    set, else the token in `github.token_env`. `on_retry` goes to the request policy
    (`bot.github.policy.RequestPolicy`).
    """

    def __init__(
        self,
        view: ConfigView,
        *,
        token: str | None = None,
        base_url: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        retry: RetrySettings = DEFAULT_RETRY,
        page_size: int = PAGE_SIZE,
        on_request: Callable[[str, int | str], None] | None = None,
        budget: Budget | None = None,
        on_retry: Callable[[str, float], None] | None = None,
        app: InstallationAuth | None = None,
        name: str | None = None,
    ) -> None:
        self.settings = view
        config = view.current
        self.budget = budget if budget is not None else Budget(clock=clock)
        env = config.github.token_env
        credentials = app_credentials() if token is None and app is None else None
        self.token = token if token is not None or credentials or app else secret(env)
        self.app_auth = app or (InstallationAuth(credentials, owner=_single_owner(config))
                                if credentials else None)
        auth: Auth.Auth | None = self.app_auth or (Auth.Token(self.token) if self.token
                                                    else None)
        self.base_url = (base_url or config.github.api_url).rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise SourceError(
                f"github.api_url: expected an http(s) URL such as https://api.github.com, "
                f"got {self.base_url!r}"
            )
        self.clock = clock
        self.github = Github(
            base_url=self.base_url,
            auth=auth,
            per_page=100,
            retry=None,
            seconds_between_requests=None,
            seconds_between_writes=None,
            timeout=max(1, round(config.github.timeout_seconds)),
            lazy=True,
        )
        if on_request is not None:
            count_requests(self.github.requester, on_request)
        self.policy = RequestPolicy(
            self.github.requester,
            api_url=self.base_url,
            token_source=(name or ("of the GitHub App in $" + APP_ID_ENV
                                   if credentials or app else f"in ${env}" if token is None
                                   else "given")),
            clock=clock,
            settings=retry,
            on_retry=on_retry,
        )
        self.mode = "graphql" if auth is not None else "rest"
        self.backend: _Backend
        if auth is not None:
            self.backend = GraphQLBackend(
                self.github.requester, self.policy, progress, page_size=page_size,
                budget=self.budget,
            )
        else:
            self.backend = RestBackend(self.github.requester, self.policy, progress)
        self.lookups = Lookups(
            self.github.requester, self.policy, self.budget, clock=clock,
            graphql=self.backend if isinstance(self.backend, GraphQLBackend) else None)

    @property
    def config(self) -> Config:
        """The config in force (its repositories' time zones and privacy)."""
        return self.settings.current

    def close(self) -> None:
        self.github.close()

    def period(self, repo: str, week: str) -> Period:
        """The week's bounds in the repository's time zone."""
        return week_period(week, self.config.repo(repo).timezone)

    def _check(self, repo: str) -> None:
        owner, _, name = repo.partition("/")
        if not owner or not name or "/" in name:
            raise SourceError(f"repository must be written owner/name, got {repo!r}")
        if self.app_auth is not None and self.app_auth.owner is None:
            self.app_auth.owner = owner  # whose installation to look up, if need be
        if self.mode == "rest" and self.config.repo(repo).private:
            raise SourceError(
                f"{repo} is private: set ${self.config.github.token_env} to a GitHub token"
            )

    def _now(self) -> datetime:
        return self.clock.now().replace(microsecond=0)

    def fetch_week(self, repo: str, week: str) -> Snapshot:
        """Every PR merged or closed in the week, or opened in it and still open."""
        self._check(repo)
        period = self.period(repo, week)
        fetched_at = self._now()
        with self.budget.fetch(repo, "week"):
            pulls, _ = self.backend.search(repo, period.since, period.until)
        return week_snapshot(repo, pulls, period, fetched_at)

    def fetch_counted_week(self, repo: str, week: str) -> Snapshot:
        """The week read for its counts only (the trends of the week after it): each PR's
        title, body, labels and files, its reviews, threads and checks left unknown.
        With GraphQL about a third of a full week's points; REST has no lighter read."""
        if not isinstance(self.backend, GraphQLBackend):
            return self.fetch_week(repo, week)
        self._check(repo)
        period = self.period(repo, week)
        fetched_at = self._now()
        with self.budget.fetch(repo, "trends"):
            pulls, _ = self.backend.search(repo, period.since, period.until, counted=True)
        return week_snapshot(repo, pulls, period, fetched_at)

    def fetch_changes(
        self, repo: str, week: str, *, since: datetime, recheck: Sequence[int] = ()
    ) -> WeekChanges:
        """PRs of the week's windows updated since `since`, and heads of `recheck`."""
        self._check(repo)
        period = self.period(repo, week)
        fetched_at = self._now()
        with self.budget.fetch(repo, "changes"):
            pulls, heads = self.backend.search(
                repo, period.since, period.until, updated_since=since, recheck=recheck
            )
        return WeekChanges(pulls=tuple(pulls), heads=tuple(heads), fetched_at=fetched_at)

    def fetch_pulls(self, repo: str, numbers: Sequence[int]) -> list[PullRequest]:
        """Full records of the given PRs (numbers that are not PRs are left out)."""
        self._check(repo)
        if not numbers:
            return []
        with self.budget.fetch(repo, "pulls"):
            return self.backend.pulls(repo, numbers)

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        """One PR with its reviews and threads, or None when it does not exist."""
        found = self.fetch_pulls(repo, [number])
        return found[0] if found else None


    def repository(self, repo: str) -> RepoFacts | None:
        """The repository as GitHub names it, and whether it is private; None when
        GitHub has none by that name (or does not show it to this token)."""
        self._check(repo)
        return self.lookups.repository(repo)

    def review_queue(self, repos: Sequence[str]) -> ReviewQueue:
        """The PRs waiting for review in `repos`, oldest first: one search."""
        for repo in repos:
            self._check(repo)
        return self.lookups.review_queue(repos)


def _single_owner(config: Config) -> str | None:
    """The account owning every configured repository, if there is exactly one."""
    owners = {name.split("/", 1)[0].lower() for name in config.repos}
    return owners.pop() if len(owners) == 1 else None


def week_snapshot(
    repo: str, pulls: Sequence[PullRequest], period: Period, fetched_at: datetime | None
) -> Snapshot:
    """The PRs that belong to the week, by number, as a snapshot."""
    kept = {p.number: p for p in pulls if belongs_to_week(p, period)}
    return Snapshot(
        repository=repo,
        fetched_at=fetched_at,
        pulls=tuple(kept[n] for n in sorted(kept)),
    )


def count_requests(requester: Requester, on_request: Callable[[str, int | str], None]) -> None:
    """Report every request this requester sends, with its status.

    Both backends send everything through `requestJsonAndCheck` (PyGithub's paginated
    lists fetch each page with it too), so wrapping it on this one instance sees each
    request once.
    """
    send = requester.requestJsonAndCheck

    def counted(verb: str, url: str, *args: Any, **kwargs: Any) -> tuple[dict[str, Any], Any]:
        api = "graphql" if url == requester.graphql_url else "rest"
        try:
            answer = send(verb, url, *args, **kwargs)
        except GithubException as exc:
            on_request(api, exc.status)
            raise
        except requests.RequestException:
            on_request(api, "error")
            raise
        on_request(api, 200)
        return answer

    setattr(requester, "requestJsonAndCheck", counted)  # noqa: B010 - one instance only
