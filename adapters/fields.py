"""Fields of a platform's JSON payload read without trusting its shape: a verified
payload is still whatever the platform (or a change on its side) sent, so a field that
is not what it should be reads as absent rather than raising."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def str_or_none(value: object) -> str | None:
    """`value` when it is a string with something in it, else None."""
    return value if isinstance(value, str) and value else None


def mapping(value: object) -> Mapping[str, Any]:
    """`value` when it is a mapping (an object), else an empty one."""
    return value if isinstance(value, Mapping) else {}
