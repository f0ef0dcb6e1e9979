"""Chat replies rendered once per process: the same answer asked again (in a busy
channel, `risks for #N` is asked by many) reuses its platform payload instead of
running the templates again. Digests are not kept: they are large and posted rarely.

A reply is frozen data, so it is its own key. Each caller gets its own list, but the
messages in it are shared and must not be changed (Slack and Telegram messages are
frozen; Feishu cards are only read, to be serialised).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from bot.models import Reply

__all__ = ["REPLIES_KEPT", "reply_memo"]

P = ParamSpec("P")
T = TypeVar("T")

# Rendered answers kept per platform; a few kilobytes each.
REPLIES_KEPT = 1024


def reply_memo(
    render: Callable[Concatenate[Reply, P], T], *, maxsize: int = REPLIES_KEPT
) -> Callable[Concatenate[Reply, P], T]:
    """`render`, remembering its result for the last `maxsize` distinct non-digest
    replies (and arguments)."""
    cached = functools.lru_cache(maxsize=maxsize)(render)

    @functools.wraps(render)
    def memoized(reply: Reply, /, *args: P.args, **kwargs: P.kwargs) -> T:
        if reply.kind == "digest":
            return render(reply, *args, **kwargs)
        try:
            result = cached(reply, *args, **kwargs)  # type: ignore[arg-type]
        except TypeError as exc:
            if "unhashable" not in str(exc):
                raise
            return render(reply, *args, **kwargs)
        # A list of messages is the caller's to reorder or cut; the messages are shared.
        return result.copy() if isinstance(result, list) else result  # type: ignore[return-value]

    memoized.cache_info = cached.cache_info  # type: ignore[attr-defined]
    memoized.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return memoized
