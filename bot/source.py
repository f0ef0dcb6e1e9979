"""Where a week of PRs comes from: a snapshot file, or GitHub through the cache.

Handlers and the scheduler depend on the `Source` protocol only, so tests and the
offline demo can swap GitHub for a file without touching them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import msgspec

from bot.errors import SourceError
from bot.models import PullRequest, Snapshot


class WeekData(msgspec.Struct, frozen=True, kw_only=True):
    """A week's snapshot, and whether it is a cached copy served while GitHub failed."""

    snapshot: Snapshot
    stale: bool = False
    age_seconds: float | None = None


class Source(Protocol):
    def fetch_week(self, repo: str, week: str) -> WeekData:
        """All PRs of `repo` that belong to `week` (extra PRs are filtered later)."""
        ...

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        """One PR with its reviews and threads, or None when it does not exist."""
        ...


@runtime_checkable
class HeldPulls(Protocol):
    """A source that may hold PRs in memory: handlers ask it first, on the event loop,
    and only go to a worker thread (and Redis or GitHub) when it holds nothing."""

    def held_pull(self, repo: str, number: int) -> PullRequest | None:
        """The PR without any I/O, or None."""
        ...


@runtime_checkable
class KeepsWeeks(Protocol):
    """A source that keeps the weeks it fetched (the cache): worth fetching ahead."""

    def holds_fresh(self, repo: str, week: str) -> bool | None:
        """Whether it holds the week fresh; None when it keeps nothing (no cache)."""
        ...


@runtime_checkable
class ReadsTrends(Protocol):
    """A source that reads a week for the trends of the next for less than in full
    (the cache over GitHub: only what topics are told from), and keeps it."""

    def fetch_trend_week(self, repo: str, week: str) -> WeekData:
        """The week's PRs with at least their titles, labels and files."""
        ...

    def holds_trends_fresh(self, repo: str, week: str) -> bool | None:
        """Whether `fetch_trend_week` would ask GitHub nothing; None when it keeps nothing."""
        ...


@runtime_checkable
class ForgetsPulls(Protocol):
    """A source that caches PRs: told when GitHub reports one changed."""

    def forget_pull(self, repo: str, number: int) -> None:
        """Drop the cached copy of the PR, so the next fetch asks GitHub."""
        ...


class QueuedPull(msgspec.Struct, frozen=True, kw_only=True):
    """A PR open and waiting for review, as GitHub lists it."""

    repository: str
    number: int
    title: str
    url: str
    author: str | None = None
    created_at: datetime | None = None


class ReviewQueue(msgspec.Struct, frozen=True, kw_only=True):
    """The PRs open and waiting for review (not drafts, neither approved nor sent back
    for changes) in some repositories, oldest first, as GitHub answered at
    `fetched_at`; `total` counts them all, `pulls` holds the oldest of them."""

    pulls: tuple[QueuedPull, ...]
    total: int
    fetched_at: datetime


class RepoFacts(msgspec.Struct, frozen=True, kw_only=True):
    """A repository as GitHub names it (its owner's and its own spelling) and whether
    it is private."""

    name: str
    private: bool


class GitHubLookups(Protocol):
    """What chat asks GitHub itself, beside the weeks of PRs: whether a repository
    exists (and is private), and which of its PRs wait for review now."""

    def repository(self, repo: str) -> RepoFacts | None:
        """The repository, or None when GitHub has none by that name (or hides it)."""
        ...

    def review_queue(self, repos: Sequence[str]) -> ReviewQueue:
        """The PRs waiting for review in `repos`: one request, whatever their number."""
        ...


class SnapshotSource:
    """Serves every week and PR from snapshot files (the offline mode): one file, which
    answers for whichever repository is asked, or one file per repository."""

    def __init__(self, snapshot: Snapshot, *others: Snapshot) -> None:
        self.snapshot = snapshot
        self._others = {s.repository.lower(): s for s in others}
        self._by_number = {pull.number: pull for pull in snapshot.pulls}
        self._numbers = {name: {pull.number: pull for pull in held.pulls}
                         for name, held in self._others.items()}
        self._numbers[snapshot.repository.lower()] = self._by_number

    def holds(self, repo: str) -> bool:
        """Whether a file of this source is `repo`'s own."""
        return repo.lower() in (self.snapshot.repository.lower(), *self._others)

    def snapshot_of(self, repo: str) -> Snapshot:
        """The file holding `repo`; with a single file, that file whatever is asked."""
        if not self._others or repo.lower() == self.snapshot.repository.lower():
            return self.snapshot
        held = self._others.get(repo.lower())
        if held is None:
            raise SourceError(f"no snapshot file holds {repo}")
        return held

    def fetch_week(self, repo: str, week: str) -> WeekData:
        return WeekData(snapshot=self.snapshot_of(repo))

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        """The PR of the snapshot's repository; another repository's #N is not in it."""
        return self._numbers.get(repo.lower(), {}).get(number)
