"""GitHub's GraphQL points for the fake GitHub: the documented cost of a query, spent
from an hourly budget and reported in `rateLimit` and the rate-limit headers.

The formula (GitHub's "Calculating a rate limit score before running the call"): every
connection (a field asked for with `first` or `last`) needs one request per node of
the connections above it, the product of their `first`/`last` values, and one at the
top level; the sum divided by 100 and rounded to the nearest whole number is the cost,
at least 1. A query costing more than what remains is refused with GraphQL's
RATE_LIMITED error, as GitHub refuses it.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
    parse,
)

LIMIT = 5000
"""Points per hour of a personal access token (an App installation gets 5,000 to 12,500)."""


def _limit(field: FieldNode, variables: dict[str, Any]) -> int | None:
    """The `first` or `last` a field asks for; None when it is not a connection."""
    for argument in field.arguments or ():
        if argument.name.value not in {"first", "last"}:
            continue
        value = argument.value
        if isinstance(value, IntValueNode):
            return int(value.value)
        if isinstance(value, VariableNode):
            given = variables.get(value.name.value)
            return int(given) if given is not None else None
    return None


def requests_needed(query: str, variables: dict[str, Any] | None = None) -> int:
    """The requests GitHub counts for `query`: one per connection per parent node."""
    document = parse(query)
    fragments = {d.name.value: d for d in document.definitions
                 if isinstance(d, FragmentDefinitionNode)}
    values = variables or {}
    total = 0

    def walk(selections: SelectionSetNode, parents: int, seen: frozenset[str]) -> None:
        nonlocal total
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                limit = _limit(selection, values)
                below = parents
                if limit is not None:
                    total += parents
                    below = parents * limit
                if selection.selection_set is not None:
                    walk(selection.selection_set, below, seen)
            elif isinstance(selection, InlineFragmentNode):
                walk(selection.selection_set, parents, seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name in fragments and name not in seen:
                    walk(fragments[name].selection_set, parents, seen | {name})

    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            walk(definition.selection_set, 1, frozenset())
    return total


def query_cost(query: str, variables: dict[str, Any] | None = None) -> int:
    """Points `query` costs: requests / 100, rounded to the nearest, at least 1."""
    return max(1, int(requests_needed(query, variables) / 100 + 0.5))


class Points:
    """The hourly budget one token spends. Tests set `remaining` and `reset_in`."""

    def __init__(self, *, limit: int = LIMIT, reset_in: float = 3600.0) -> None:
        self.limit = limit
        self.remaining = limit
        self.reset_in = reset_in
        self.costs: list[int] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        self._reset_at = time.time() + reset_in

    @property
    def reset_at(self) -> float:
        return self._reset_at

    def set_reset_in(self, seconds: float) -> None:
        with self._lock:
            self._reset_at = time.time() + seconds

    def spend(self, query: str, variables: dict[str, Any]) -> dict[str, Any] | None:
        """Charge the query; the RATE_LIMITED answer when it costs more than is left."""
        try:
            cost = query_cost(query, variables)
        except GraphQLError:
            cost = 1  # a syntax error is answered (and charged) by the schema's check
        with self._lock:
            if time.time() >= self._reset_at:
                self.remaining = self.limit
                self._reset_at = time.time() + self.reset_in
            if cost > self.remaining:
                self._local.cost = 0
                return {"errors": [{"type": "RATE_LIMITED", "message":
                                    "API rate limit already exceeded for user ID 1."}]}
            self.remaining -= cost
            self.costs.append(cost)
            self._local.cost = cost
        return None

    def spent(self) -> int:
        with self._lock:
            return sum(self.costs)

    def answer(self) -> dict[str, Any]:
        """`rateLimit` as GitHub answers it, after this request's cost."""
        with self._lock:
            reset = datetime.fromtimestamp(self._reset_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            return {"cost": getattr(self._local, "cost", 0), "limit": self.limit,
                    "nodeCount": 0, "remaining": self.remaining, "resetAt": reset,
                    "used": self.limit - self.remaining}

    def headers(self) -> dict[str, str]:
        """The rate-limit headers of a GraphQL answer (the `graphql` resource)."""
        with self._lock:
            return {"X-RateLimit-Limit": str(self.limit),
                    "X-RateLimit-Remaining": str(self.remaining),
                    "X-RateLimit-Used": str(self.limit - self.remaining),
                    "X-RateLimit-Reset": str(int(self._reset_at)),
                    "X-RateLimit-Resource": "graphql"}
