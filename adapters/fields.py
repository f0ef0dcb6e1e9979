"""Reading a platform's JSON payload, whose every field may be missing or of another
type than documented: a field is taken only as the type expected, else as nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["mapping", "text"]


def mapping(value: object) -> Mapping[str, Any]:
    """An object field; empty when it is anything else."""
    return value if isinstance(value, Mapping) else {}


def text(value: object) -> str | None:
    """A string field that says something; None when it is empty or anything else."""
    return value if isinstance(value, str) and value else None
