"""Turn msgspec's decode errors into one line that names the bad field's path."""

from __future__ import annotations

import re
import types
import typing
from typing import Any, Literal

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


_STEP = re.compile(r"\[[0-9]+\]|[^.\[\]]+")


def describe(error: msgspec.ValidationError | msgspec.DecodeError, prefix: str = "",
             kind: Any = None) -> str:
    """`pulls[3].merged_at: not an ISO 8601 time` from msgspec's message.

    `prefix` is the path of the value that was decoded, when it sits inside a larger
    document; `kind`, the type it was decoded into, lets an invalid choice say which
    values are allowed (`invalid value 'short' (expected full or compact)`).
    """
    text = str(error)
    match = _AT.match(text)
    what, path = (match["what"], match["path"].lstrip(".")) if match else (text, "")
    for pattern, replacement in _FRIENDLY:
        if pattern.match(what):
            what = pattern.sub(replacement, what)
            break
    allowed = choices(kind, path) if kind is not None and what.startswith("invalid value") \
        else ()
    if allowed:
        what = f"{what} (expected {_either(allowed)})"
    if prefix:
        path = f"{prefix}{'' if not path or path.startswith('[') else '.'}{path}"
    return f"{path}: {what}" if path else what


def choices(kind: Any, path: str) -> tuple[str, ...]:
    """The values a `Literal` field at `path` (`channels[0].style`) of `kind` allows, in
    the order the type declares them; () where the path does not lead to one."""
    hint = kind
    for step in _STEP.findall(path):
        hint = _required(hint)
        if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
            hint = typing.get_type_hints(hint).get(step)
        else:  # `[3]` of a tuple (`tuple[X, ...]`), or a key of a table (`dict[str, X]`)
            args = [a for a in typing.get_args(hint) if a is not Ellipsis]
            hint = args[-1] if args else None
        if hint is None:
            return ()
    hint = _required(hint)
    return tuple(map(str, typing.get_args(hint))) if typing.get_origin(hint) is Literal \
        else ()


def _required(hint: Any) -> Any:
    """`X | None` -> `X` (an optional section such as `[llm]`)."""
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return hint
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if len(args) == 1 else hint



def _either(values: tuple[str, ...]) -> str:
    """`full or compact`, `slack, telegram or feishu`."""
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"
