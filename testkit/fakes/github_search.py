"""The search qualifiers the fake GitHub understands (`repo:`, `is:`, `merged:`,
`updated:`, `draft:`, `review:`, `sort:`, any of them negated with `-`), parsed as
GitHub reads them. Several `repo:` qualifiers search each of those repositories."""

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


def searched_repos(query: str) -> list[str]:
    """Every repository a query's `repo:` qualifiers name, in order."""
    return [token.partition(":")[2] for token in query.split() if token.startswith("repo:")]


def parse_search(query: str) -> tuple[str | None, Callable[[PullRequest], bool], str]:
    """(first repository, predicate, sort) for the issue-search qualifiers the bot uses."""
    repos = searched_repos(query)
    tests: list[Callable[[PullRequest], bool]] = []
    sort = "created-desc"
    for token in query.split():
        negated = token.startswith("-")
        key, sep, value = token.removeprefix("-").partition(":")
        if not sep:
            raise ValueError(f"free-text search terms are not supported by the fake: {token!r}")
        test: Callable[[PullRequest], bool] | None = None
        if key == "repo":
            continue
        if key in {"is", "state", "type"}:
            test = _state_test(value)
        elif key in {"closed", "merged", "created", "updated"}:
            attr = {"closed": "closed_at", "merged": "merged_at",
                    "created": "created_at", "updated": "updated_at"}[key]
            test = _field_test(attr, _date_filter(value))
        elif key == "draft":
            wanted = value == "true"
            test = lambda p, wanted=wanted: bool(p.draft) == wanted  # noqa: E731
        elif key == "review":
            test = _review_test(value)
        elif key == "sort":
            sort = value
            continue
        else:
            raise ValueError(f"unsupported search qualifier {key!r}")
        tests.append(test if not negated else (lambda p, t=test: not t(p)))
    return (repos[0] if repos else None), (lambda p: all(t(p) for t in tests)), sort


def review_decision(pull: PullRequest) -> str | None:
    """GitHub's `reviewDecision` as the reviews make it: changes requested when a
    reviewer's latest verdict asks for changes, approved when one approves and none
    asks for changes, else none."""
    latest: dict[str | None, str] = {}
    for review in pull.reviews or ():
        if review.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[review.author] = review.state
    verdicts = set(latest.values())
    if "CHANGES_REQUESTED" in verdicts:
        return "CHANGES_REQUESTED"
    return "APPROVED" if "APPROVED" in verdicts else None


def _review_test(value: str) -> Callable[[PullRequest], bool]:
    tests: dict[str, Callable[[PullRequest], bool]] = {
        "approved": lambda p: review_decision(p) == "APPROVED",
        "changes_requested": lambda p: review_decision(p) == "CHANGES_REQUESTED",
        "none": lambda p: not p.reviews,
    }
    if value not in tests:
        raise ValueError(f"unsupported review: qualifier {value!r}")
    return tests[value]


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
