"""What one value of the config file must look like: a repository's name, an address the
service calls, a channel's id, a title pattern. Each check raises a `ConfigError` that
names the field (`where`), so a mistake is found at load, not hours later in a URL path,
a Redis key or a digest that never goes out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from bot.errors import ConfigError
from bot.patterns import PatternRefused, title_pattern

_NAME_PART = re.compile(r"[A-Za-z0-9_.-]{1,100}")
"""The characters GitHub allows in an owner's or a repository's name."""
_PATH_SEGMENTS = frozenset({".", ".."})


def check_repo_name(name: str, where: str) -> None:
    """`owner/name`, each part made of GitHub's characters and neither `.` nor `..`: the
    name goes into API paths, report URLs and cache keys, where `../x` is a path."""
    owner, _, repo = name.partition("/")
    if not all(_NAME_PART.fullmatch(part) and part not in _PATH_SEGMENTS
               for part in (owner, repo)):
        raise ConfigError(f"{where}: repository must be written owner/name (letters, digits, "
                          f"'-', '_' and '.'), got {name!r}")


def check_repo_pattern(pattern: str, where: str) -> None:
    """`owner/name`, `owner/*` (every repository of an owner) or `*/*` (any)."""
    owner, _, name = pattern.partition("/")
    parts_valid = [part == "*" or (_NAME_PART.fullmatch(part) is not None
                                   and part not in _PATH_SEGMENTS) for part in (owner, name)]
    if not all(parts_valid) or (owner == "*" and name != "*"):
        raise ConfigError(f"{where}: write owner/name, owner/* or */*, got {pattern!r}")


def check_web_url(field: str, value: str, example: str) -> None:
    """An http(s) URL with a host (`http://` alone has none)."""
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ConfigError(f"{field}: expected an http(s) URL such as {example}, got {value!r}")


def check_channel_id(value: str, where: str) -> None:
    """A channel's id names where digests go and what its ledger is keyed by: an empty
    or padded one matches no chat and would never be posted to."""
    if not value.strip() or value.strip() != value:
        raise ConfigError(f"{where}.id: must name the chat (its platform's channel or "
                          f"chat id), got {value!r}")


def check_title_patterns(patterns: Sequence[str], where: str) -> None:
    """Each pattern is one RE2 runs in linear time (`bot.patterns`)."""
    for index, pattern in enumerate(patterns):
        try:
            title_pattern(pattern)
        except PatternRefused as exc:
            raise ConfigError(f"{where}.exclude.titles[{index}]: not a regular expression "
                              f"that can be matched in linear time ({exc}); backreferences "
                              "and lookaround are not supported") from None
