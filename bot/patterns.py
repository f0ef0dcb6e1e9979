"""Regular expressions written in the config (`exclude.titles`), run by RE2.

Python's `re` backtracks: `(a+)+$` against forty `a`s and a `b` takes minutes, and a
title is matched on the event loop that also answers webhooks and `/healthz`. RE2 runs
in time linear in the title for every pattern it accepts, so a pattern costs microseconds
whatever it says; the few constructs it cannot run in linear time (backreferences,
lookaround) it refuses, and the config refuses them at load, naming the field.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the refusal is ours to report, by field, not RE2's on stderr


class PatternRefused(ValueError):
    """A pattern RE2 cannot run in linear time, or not a regular expression at all."""


@lru_cache(maxsize=256)
def title_pattern(pattern: str) -> Any:
    """The compiled pattern (RE2 syntax: Python's, less backreferences and lookaround);
    `.search(title)` finds it anywhere in a title. Raises `PatternRefused` saying why."""
    try:
        return re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternRefused(str(reason)) from None


def found_in(pattern: str, text: str) -> bool:
    """Whether `pattern` (checked at load) is found anywhere in `text`."""
    return title_pattern(pattern).search(text) is not None
