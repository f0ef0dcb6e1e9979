"""The optional parts of an installation: each chat platform's SDK and the narrator's
are extras (`pip install 'prdigest[slack]'`, `[telegram]`, `[feishu]`, `[llm]`,
`[all]`), so a Slack-only service carries no lark-oapi or openai. A part that is
configured but not installed is one line naming the extra to install."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

from bot.errors import ConfigError


class MissingExtra(ConfigError):
    """A configured part whose libraries this installation lacks."""


def missing(modules: Iterable[str]) -> list[str]:
    """The top-level modules of `modules` that cannot be imported here (none is)."""
    return [name for name in modules if importlib.util.find_spec(name) is None]


def require(extra: str, what: str, modules: Iterable[str]) -> None:
    """Raise `MissingExtra` naming the extra when one of `modules` is not installed."""
    absent = missing(modules)
    if absent:
        raise MissingExtra(f"{what} needs {', '.join(absent)}, which this installation "
                           f"lacks: install prdigest[{extra}] (pip install "
                           f"'prdigest[{extra}]')")
