"""Reading a platform's JSON payload, whose every field may be missing or of another
type than documented: a field is taken only as the type expected, else as nothing; and
an SDK's typed event as the plain data it was read from."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["mapping", "plain", "text"]


def mapping(value: object) -> Mapping[str, Any]:
    """An object field; empty when it is anything else."""
    return value if isinstance(value, Mapping) else {}


def text(value: object) -> str | None:
    """A string field that says something; None when it is empty or anything else."""
    return value if isinstance(value, str) and value else None


def plain(value: object, other: Callable[[object], Any]) -> Any:
    """An SDK's event object as the plain JSON data it was read from: its attributes as
    a dict, those that are None left out; `other` for a value that is none of those."""
    if isinstance(value, dict):
        return {k: plain(v, other) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple, set)):
        return [plain(v, other) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "__dict__"):
        return plain(vars(value), other)
    return other(value)
