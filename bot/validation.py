"""Turn msgspec's decode errors into one line that names the bad field's path."""

from __future__ import annotations

import re

import msgspec

_AT = re.compile(r"^(?P<what>.*?) - at `\$(?P<path>[^`]*)`$")

_FRIENDLY = (
    (re.compile(r"^Invalid RFC3339 encoded datetime"), "not an ISO 8601 time"),
    (re.compile(r"^Expected `datetime` with a timezone component"),
     "an ISO 8601 time needs a time zone (such as Z or +08:00)"),
    (re.compile(r"^Expected `datetime`, got `(\w+)`"), "not an ISO 8601 time"),
    (re.compile(r"^Invalid enum value (.*)"), r"invalid value \1"),
    (re.compile(r"^Object missing required field `(\w+)`"), r"missing required field '\1'"),
    (re.compile(r"^Expected `(.+?)`, got `(\w+)`"), r"expected \1, got \2"),
    (re.compile(r"^Object contains unknown field `(.+)`"), r"unknown field '\1'"),
)


def describe(error: msgspec.ValidationError | msgspec.DecodeError, prefix: str = "") -> str:
    """`pulls[3].merged_at: not an ISO 8601 time` from msgspec's message.

    `prefix` is the path of the value that was decoded, when it sits inside a larger
    document.
    """
    text = str(error)
    match = _AT.match(text)
    what, path = (match["what"], match["path"].lstrip(".")) if match else (text, "")
    for pattern, replacement in _FRIENDLY:
        if pattern.match(what):
            what = pattern.sub(replacement, what)
            break
    if prefix:
        path = f"{prefix}{'' if not path or path.startswith('[') else '.'}{path}"
    return f"{path}: {what}" if path else what
