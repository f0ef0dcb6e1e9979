"""A platform's settings as a caller adjusts them: an adapter's `from_config(...,
**overrides)` takes both fields of its `[platforms.<name>]` table (a test's fake
server, a mode) and arguments of its constructor; the fields are taken out here, so
what is left goes to the constructor."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from bot.config import PlatformSettings

__all__ = ["settings_with"]

S = TypeVar("S", bound=PlatformSettings)


def settings_with(settings: S, overrides: dict[str, Any]) -> S:
    """`settings` with each override that names one of its fields applied; those are
    taken out of `overrides`."""
    fields = set(type(settings).__struct_fields__)
    return msgspec.structs.replace(settings, **{
        name: overrides.pop(name) for name in list(overrides) if name in fields})
