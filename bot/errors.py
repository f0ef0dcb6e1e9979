"""Errors a user can act on: each names what is wrong in one line.

The CLI turns them into exit code 2 without a traceback; chat handlers turn them into
a friendly reply. Anything else is a bug and is allowed to surface as one.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input from a person: a file, an option, a config field."""


class SnapshotError(UserError):
    """A snapshot file that cannot be read or does not follow prdigest.snapshot/1."""


class ConfigError(UserError):
    """A config file that cannot be read or has an invalid field."""


class WeekError(UserError):
    """A week that is not an ISO week such as 2026-W29."""


class FutureWeekError(WeekError):
    """A week that has not started yet; says which week is the current one."""

    def __init__(self, message: str, *, week: str, current: str) -> None:
        super().__init__(message)
        self.week = week
        self.current = current


class SourceError(UserError):
    """GitHub could not give the data (no token, unknown repository, network, limits)."""


class UncoveredWeekError(SourceError):
    """A snapshot file asked for a week it does not hold: after it was fetched, or
    before its first PR. Says which, instead of an empty report."""


class ThreadGone(Exception):
    """A reply under a message that is no longer there (deleted, recalled): the
    platform posted nothing, so the caller may post it at the top level instead."""


class DeliveryInDoubt(Exception):
    """A send that may or may not have reached the platform: the request went out and no
    answer came (it timed out, the connection dropped). `resend`: the platform's policy
    for such a send - send it again (it may then arrive twice), or hold it for an
    operator (it is then never sent twice, and possibly not at all)."""

    def __init__(self, message: str, *, resend: bool) -> None:
        super().__init__(message)
        self.resend = resend
