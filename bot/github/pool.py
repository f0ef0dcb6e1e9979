"""Several GitHub credentials in one service: tokens and a GitHub App's installations.

One credential gives 5,000 points an hour (an App installation up to 12,500) and one
App installation reads one account's repositories. The pool holds every credential the
environment gives - the token in `github.token_env`, the tokens in `github.token_envs`,
and with a GitHub App an installation per owner of the configured repositories (or the
one `GITHUB_APP_INSTALLATION_ID` names) - each with its own points (`Budget`).

Each repository is fetched with a credential that can read it: an installation reads
its owner's repositories, a token whatever GitHub lets it (a private repository a token
cannot see answers "unknown repository"; the next credential is tried and that token is
not asked about it again). Among those, a fetch takes the credential the prefetch plan
gave the repository while it has the points, else the one with the most points left,
else - all of them spent - the one that refills first. A cold cache at the posting
minute (first deployment, Redis restarted without persistence) is so spread over the
pool: two credentials fetch it in half the time of one. The prefetch plan places the
fetches ahead of the posts so that no credential spends more than 80% of its hourly
points in any rolling hour (`bot.github.plan`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, ConfigView, secret
from bot.errors import SourceError
from bot.github.app import InstallationAuth, app_credentials
from bot.github.budget import Budget, RateLimit
from bot.github.lookups import QUEUE_SHOWN
from bot.github.plan import Fetch, Lane, Placed, pace
from bot.github.rest import UnknownRepository
from bot.github.source import GitHubSource, WeekChanges
from bot.models import Period, PullRequest, Snapshot
from bot.source import QueuedPull, RepoFacts, ReviewQueue


@dataclass(frozen=True)
class Credential:
    """One credential of the pool: its name (the variable, or `app:<owner>`; never its
    value), its token or App installation, and the owner it is limited to (an App
    installation's account; None: a token, any repository it can see)."""

    name: str
    token: str | None = None
    app: InstallationAuth | None = None
    owner: str | None = None

    def __repr__(self) -> str:  # never the token
        return f"Credential({self.name!r}, owner={self.owner!r})"


def pool_credentials(config: Config) -> list[Credential]:
    """Every credential the config and environment give, in a fixed order (the same on
    every replica): with a GitHub App, its installation per owner of the configured
    repositories (the one named by `GITHUB_APP_INSTALLATION_ID` serves them all);
    without one, the token in `github.token_env`; and the tokens in
    `github.token_envs` in either case."""
    found: list[Credential] = []
    app = app_credentials()
    if app is not None:
        owners = sorted({name.split("/", 1)[0].lower() for name in config.repos})
        if app.installation_id is not None or len(owners) <= 1:
            single = owners[0] if len(owners) == 1 else None
            found.append(Credential("app", app=InstallationAuth(app, owner=single),
                                    owner=None if app.installation_id else single))
        else:
            found += [Credential(f"app:{owner}", app=InstallationAuth(app, owner=owner),
                                 owner=owner) for owner in owners]
    else:
        token = secret(config.github.token_env)
        if token:
            found.append(Credential(config.github.token_env, token=token))
    for env in config.github.token_envs:
        token = secret(env)
        if token:
            found.append(Credential(env, token=token))
    return found


@dataclass
class Member:
    """A credential with its own GitHub client and points, and the repositories it was
    found unable to read."""

    credential: Credential
    source: GitHubSource
    unreadable: set[str] = field(default_factory=set)

    @property
    def budget(self) -> Budget:
        return self.source.budget

    def serves(self, repo: str) -> bool:
        owner = self.credential.owner
        return repo.lower() not in self.unreadable and (
            owner is None or repo.split("/", 1)[0].lower() == owner)


class BudgetPool(Budget):
    """The pool's points: per repository, the budget of the credential that fetches it
    (`for_repo`); as a whole (`remaining`, `reset_at`), the sum of what the members
    have left and the first refill."""

    def __init__(self, members: Sequence[Member], *, clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__(clock=clock, name="pool")
        self.members = list(members)
        self.planned: dict[str, str] = {}
        self._planned_lock = threading.Lock()
        self.limit = sum(m.budget.limit for m in self.members)

    def refresh(self, _rate: RateLimit | None = None) -> None:
        """Totals after a member's answer."""
        known = [m.budget for m in self.members if m.budget.remaining is not None]
        self.remaining = sum(b.remaining or 0 for b in known) if known else None
        resets = [b.reset_at for b in known if b.reset_at is not None]
        self.reset_at = min(resets) if resets else None
        self.limit = sum(m.budget.limit for m in self.members)

    def eligible(self, repo: str) -> list[Member]:
        return [m for m in self.members if m.serves(repo)]

    def member_for(self, repo: str) -> Member:
        """The credential to fetch `repo` with now (module docstring)."""
        eligible = self.eligible(repo)
        if not eligible:
            raise SourceError(f"no GitHub credential can read {repo}: "
                              + ", ".join(f"{m.credential.name} does not see it"
                                          if repo.lower() in m.unreadable else
                                          f"{m.credential.name} reads {m.credential.owner}'s"
                                          for m in self.members))
        need = self.week_cost(repo)
        with self._planned_lock:
            planned = self.planned.get(repo)
        for member in eligible:
            if member.credential.name == planned and not member.budget.short_of(need):
                return member
        ready = [m for m in eligible if not m.budget.short_of(need)]
        if ready:
            return max(ready, key=lambda m: (_left(m.budget), -eligible.index(m)))
        return min(eligible, key=lambda m: m.budget.seconds_to_reset())

    def for_repo(self, repo: str) -> Budget:
        try:
            return self.member_for(repo).budget
        except SourceError:
            return self  # no credential reads it: the fetch says so

    def known_week_cost(self, repo: str) -> int | None:
        known = [c for m in self.members if (c := m.budget.known_week_cost(repo)) is not None]
        return max(known) if known else None

    def short_of(self, points: int) -> bool:
        return all(m.budget.short_of(points) for m in self.members)

    def seconds_to_reset(self) -> float:
        return min((m.budget.seconds_to_reset() for m in self.members), default=0.0)

    def lanes(self) -> list[Lane]:
        return [Lane(m.credential.name, m.budget.limit, m.serves) for m in self.members]

    def pace(self, fetches: Sequence[Fetch]) -> list[Placed | None]:
        """The plan over the pool; each repository remembers its credential."""
        placed = pace(fetches, self.lanes())
        with self._planned_lock:
            for fetch, where in zip(fetches, placed, strict=True):
                if where is not None:
                    self.planned[fetch.repo] = where.lane
        return placed

    def status(self) -> list[dict[str, Any]]:
        """/healthz: each credential's name, reach and points; never a token."""
        return [{"name": m.credential.name, "kind": "app" if m.credential.app else "token",
                 "owner": m.credential.owner, "points_remaining": m.budget.remaining,
                 "points_limit": m.budget.limit,
                 **({"unreadable": sorted(m.unreadable)} if m.unreadable else {})}
                for m in self.members]


def _queued_order(pull: QueuedPull) -> tuple[float, str, int]:
    """Oldest first; a PR whose opening time GitHub did not give goes last."""
    opened = pull.created_at.timestamp() if pull.created_at is not None else float("inf")
    return (opened, pull.repository, pull.number)


def _left(budget: Budget) -> int:
    return budget.limit if budget.remaining is None else budget.remaining


class PooledSource:
    """`GitHubSource`'s reads, each on the credential the pool gives its repository."""

    def __init__(self, view: ConfigView, members: Sequence[Member], *,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.settings = view
        self.members = list(members)
        self.clock = clock
        self.budget = BudgetPool(self.members, clock=clock)
        first = self.members[0].source
        self.mode = first.mode
        self.app_auth = next((m.source.app_auth for m in self.members
                              if m.source.app_auth is not None), None)

    @property
    def config(self) -> Config:
        """The config in force (a reload or a chat's `follow` changes it)."""
        return self.settings.current

    def close(self) -> None:
        for member in self.members:
            member.source.close()

    def period(self, repo: str, week: str) -> Period:
        return self.members[0].source.period(repo, week)

    def _on_member(self, repo: str, read: Callable[[GitHubSource], Any]) -> Any:
        """`read` on the repository's credential; a token that cannot see the repository
        is marked so and the next credential tried."""
        while True:
            member = self.budget.member_for(repo)
            try:
                return read(member.source)
            except UnknownRepository:
                if member.credential.owner is not None or len(self.budget.eligible(repo)) < 2:
                    raise
                member.unreadable.add(repo.lower())

    def fetch_week(self, repo: str, week: str) -> Snapshot:
        snapshot: Snapshot = self._on_member(repo, lambda s: s.fetch_week(repo, week))
        return snapshot

    def fetch_counted_week(self, repo: str, week: str) -> Snapshot:
        snapshot: Snapshot = self._on_member(repo, lambda s: s.fetch_counted_week(repo, week))
        return snapshot

    def fetch_changes(self, repo: str, week: str, *, since: datetime,
                      recheck: Sequence[int] = ()) -> WeekChanges:
        changes: WeekChanges = self._on_member(
            repo, lambda s: s.fetch_changes(repo, week, since=since, recheck=recheck))
        return changes

    def fetch_pulls(self, repo: str, numbers: Sequence[int]) -> list[PullRequest]:
        pulls: list[PullRequest] = self._on_member(repo, lambda s: s.fetch_pulls(repo, numbers))
        return pulls

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        found = self.fetch_pulls(repo, [number])
        return found[0] if found else None

    def repository(self, repo: str) -> RepoFacts | None:
        """The repository as the first credential that sees it sees it (None: none
        does); a token that does not see it is passed over for it from then on."""
        for member in self.budget.eligible(repo):
            found = member.source.repository(repo)
            if found is not None:
                return found
            if member.credential.owner is None:
                member.unreadable.add(repo.lower())
        return None

    def review_queue(self, repos: Sequence[str]) -> ReviewQueue:
        """The PRs waiting for review: one search per credential the repositories need
        (one in all when a single credential reads them), merged oldest first."""
        groups: dict[str, list[str]] = {}
        members: dict[str, Member] = {}
        for repo in repos:
            member = self.budget.member_for(repo)
            groups.setdefault(member.credential.name, []).append(repo)
            members[member.credential.name] = member
        queues = [members[name].source.review_queue(group) for name, group in groups.items()]
        if len(queues) == 1:
            return queues[0]
        pulls = sorted((p for q in queues for p in q.pulls), key=_queued_order)
        return ReviewQueue(pulls=tuple(pulls[:QUEUE_SHOWN]),
                           total=sum(q.total for q in queues),
                           fetched_at=min(q.fetched_at for q in queues))

    def status(self) -> list[dict[str, Any]]:
        return self.budget.status()


def github_source(view: ConfigView, *,
                  on_update: Callable[[RateLimit], None] | None = None,
                  clock: Clock = SYSTEM_CLOCK,
                  **options: Any) -> GitHubSource | PooledSource:
    """The service's GitHub: one credential as before, or a pool of several, on the
    process's `clock`; `options` go to each credential's `GitHubSource` (`on_request`,
    `base_url`, ...)."""
    credentials = pool_credentials(view.current)
    if len(credentials) <= 1:
        return GitHubSource(view, budget=Budget(on_update=on_update, clock=clock), clock=clock,
                            **options)
    members: list[Member] = []
    pool_ref: list[PooledSource] = []

    def updated(rate: RateLimit) -> None:
        if pool_ref:
            pool_ref[0].budget.refresh(rate)
        if on_update is not None:
            on_update(rate)

    for credential in credentials:
        budget = Budget(on_update=updated, name=credential.name, clock=clock)
        said = (f"in ${credential.name}" if credential.token else
                f"of the GitHub App's installation on {credential.owner or 'its account'}")
        source = GitHubSource(view, token=credential.token, app=credential.app,
                              name=said, budget=budget, clock=clock, **options)
        members.append(Member(credential, source))
    pool = PooledSource(view, members, clock=clock)
    pool_ref.append(pool)
    return pool
