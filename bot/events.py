"""What happened, told to whoever listens: the core emits events, `/metrics` subscribes.

The schedule says a digest was posted (or not), notices and commands say they went out,
a digest build or a cache lookup says it happened - each an `Event` on the process's
one `Events`. Nothing that emits knows who listens: the server's `Metrics` subscribes
(`bot.web.metrics`), a CLI process has no listener, a test subscribes a list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.models import Reply


@dataclass(frozen=True)
class DigestPosted:
    """A weekly digest's post to `platform`: `ok`, or refused / not confirmed."""

    platform: str
    ok: bool


@dataclass(frozen=True)
class NoticePosted:
    """A merged-PR notice (or a batch of them) to `platform`."""

    platform: str
    ok: bool


@dataclass(frozen=True)
class CommandAnswered:
    """A chat command of `kind` answered on `platform` with `reply`, in `seconds`."""

    platform: str
    kind: str
    reply: Reply
    seconds: float


@dataclass(frozen=True)
class DigestBuilt:
    """A digest built, for `trigger` (a command, the schedule, a report page)."""

    trigger: str


@dataclass(frozen=True)
class ScheduleFailed:
    """A pass of the schedule failed (`pass`) or left a channel out (`channel`)."""

    kind: str


@dataclass(frozen=True)
class CacheLookup:
    """One cache read of a `kind` of entry (`week`, `pull`, `pointer`, `digest`,
    `held-pull`): a hit when it was there."""

    kind: str
    hit: bool


@dataclass(frozen=True)
class GitHubAnswered:
    """One HTTP request to GitHub's `api` (`rest`, `graphql`) and its `status` (`error`
    when nothing answered)."""

    api: str
    status: int | str


@dataclass(frozen=True)
class GitHubPoints:
    """One GraphQL answer's rate limit: its `cost`, the points `remaining` to the
    credentials in use, and when they refill (`reset_at`, a Unix time)."""

    cost: int
    remaining: int
    reset_at: float


@dataclass(frozen=True)
class ModelCalled:
    """One call to the narrator's model for `step`, its `outcome` and the tokens it
    reported."""

    step: str
    outcome: str
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class SentencesDropped:
    """The verifier dropped `count` of the model's sentences in `section`."""

    section: str
    count: int


@dataclass(frozen=True)
class NarrationFellBack:
    """A `section` went out in the engine's own words, for `reason`."""

    section: str
    reason: str


Event = (DigestPosted | NoticePosted | CommandAnswered | DigestBuilt | ScheduleFailed
         | CacheLookup | GitHubAnswered | GitHubPoints | ModelCalled | SentencesDropped
         | NarrationFellBack)
Listener = Callable[[Event], None]


class Events:
    """The process's events: `emit` tells every listener `subscribe`d, in order. A
    listener that raises is the listener's bug: it is not the emitter's to handle."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

