"""A merged PR as the engine's tests write one: its number, title and the files it
changes (each by `lines` added), merged in 2026-W29 unless `when` says otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bot.models import FileChange, PullRequest

# Wednesday of 2026-W29, in UTC and in Asia/Shanghai alike.
MERGED_W29 = datetime(2026, 7, 15, 3, tzinfo=UTC)


def merged_pull(number: int, title: str, paths: Sequence[str] = ("src/app.py",), *,
                lines: int = 40, when: datetime = MERGED_W29, repo: str = "o/r",
                **values: Any) -> PullRequest:
    """`values`: any other field of the PR (reviews, body, labels...)."""
    return PullRequest(number=number, title=title,
                       url=f"https://github.com/{repo}/pull/{number}", author="dev",
                       state="merged", merged_at=when, closed_at=when,
                       additions=lines * len(paths), deletions=0,
                       files=tuple(FileChange(path=p, additions=lines) for p in paths),
                       **values)
