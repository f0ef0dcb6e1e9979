"""The search qualifiers the fake GitHub understands (`repo:`, `is:`, `merged:`,
`updated:`, `sort:`), parsed as GitHub reads them."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from bot.models import PullRequest

_RANGE = re.compile(r"^(?P<op>>=|<=|>|<)?(?P<a>[^.]+?)(?:\.\.(?P<b>.+))?$")


def _parse_moment(text: str, *, end: bool) -> datetime:
    """A search qualifier's date or time; a bare date means its first or last second."""
    if "T" not in text:
        day = datetime.fromisoformat(text).replace(tzinfo=UTC)
        return day + timedelta(days=1, seconds=-1) if end else day
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def _date_filter(value: str) -> Callable[[datetime | None], bool]:
    match = _RANGE.match(value)
    if not match:
        raise ValueError(f"bad date qualifier {value!r}")
    op, a, b = match["op"], match["a"], match["b"]
    if b is not None:
        low, high = _parse_moment(a, end=False), _parse_moment(b, end=True)
        return lambda m: m is not None and low <= m <= high
    if op == ">=":
        low = _parse_moment(a, end=False)
        return lambda m: m is not None and m >= low
    if op == ">":
        low = _parse_moment(a, end=True)
        return lambda m: m is not None and m > low
    if op == "<=":
        high = _parse_moment(a, end=True)
        return lambda m: m is not None and m <= high
    if op == "<":
        high = _parse_moment(a, end=False)
        return lambda m: m is not None and m < high
    low, high = _parse_moment(a, end=False), _parse_moment(a, end=True)
    return lambda m: m is not None and low <= m <= high


def parse_search(query: str) -> tuple[str | None, Callable[[PullRequest], bool], str]:
    """(repository, predicate, sort) for the issue-search qualifiers the bot uses."""
    repo: str | None = None
    tests: list[Callable[[PullRequest], bool]] = []
    sort = "created-desc"
    for token in query.split():
        key, sep, value = token.partition(":")
        if not sep:
            raise ValueError(f"free-text search terms are not supported by the fake: {token!r}")
        if key == "repo":
            repo = value
        elif key in {"is", "state", "type"}:
            tests.append(_state_test(value))
        elif key in {"closed", "merged", "created", "updated"}:
            attr = {"closed": "closed_at", "merged": "merged_at",
                    "created": "created_at", "updated": "updated_at"}[key]
            tests.append(_field_test(attr, _date_filter(value)))
        elif key == "sort":
            sort = value
        else:
            raise ValueError(f"unsupported search qualifier {key!r}")
    return repo, (lambda p: all(t(p) for t in tests)), sort


def _field_test(attr: str, check: Callable[[datetime | None], bool]
                ) -> Callable[[PullRequest], bool]:
    return lambda pull: check(getattr(pull, attr))


def _state_test(value: str) -> Callable[[PullRequest], bool]:
    tests: dict[str, Callable[[PullRequest], bool]] = {
        "pr": lambda p: True,
        "issue": lambda p: False,
        "open": lambda p: p.state == "open",
        "closed": lambda p: p.state != "open",
        "merged": lambda p: p.state == "merged",
        "unmerged": lambda p: p.state != "merged",
    }
    if value not in tests:
        raise ValueError(f"unsupported is: qualifier {value!r}")
    return tests[value]


def sort_pulls(pulls: list[PullRequest], sort: str) -> list[PullRequest]:
    field_name, _, direction = sort.partition("-")
    attr = {"created": "created_at", "updated": "updated_at"}.get(field_name, "created_at")
    floor = datetime.min.replace(tzinfo=UTC)
    return sorted(
        pulls, key=lambda p: (getattr(p, attr) or floor, p.number), reverse=direction != "asc"
    )
