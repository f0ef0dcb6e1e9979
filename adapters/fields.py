"""Fields of a platform's JSON payload read without trusting its shape: a verified
payload is still whatever the platform (or a change on its side) sent, so a field that
is not what it should be reads as absent rather than raising. And an SDK's typed event
as the plain data it was read from."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def str_or_none(value: object) -> str | None:
    """`value` when it is a string with something in it, else None."""
    return value if isinstance(value, str) and value else None


def mapping(value: object) -> Mapping[str, Any]:
    """`value` when it is a mapping (an object), else an empty one."""
    return value if isinstance(value, Mapping) else {}


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
