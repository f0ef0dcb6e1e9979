"""What a platform told about someone, kept a while: a value per key read again once
it is `seconds` old, the least recently read dropped beyond `most` keys, its age on the
adapter's clock. A platform asks once per reader per minute, say, instead of on every
view (Slack's App Home tab: a user's channels and language)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from bot.clock import SYSTEM_CLOCK, Clock

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Kept(Generic[K, V]):
    """Values by key, each kept `seconds` from when it was read; at most `most` keys."""

    def __init__(self, seconds: float, most: int, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.seconds = seconds
        self.most = most
        self.clock = clock
        self._kept: OrderedDict[K, tuple[V, float]] = OrderedDict()

    async def get(self, key: K, read: Callable[[], Awaitable[V]]) -> V:
        """The value kept for `key`, or - none, or kept too long - `read()`'s, kept."""
        now = self.clock.monotonic()
        kept = self._kept.get(key)
        if kept is not None and now - kept[1] < self.seconds:
            return kept[0]
        value = await read()
        self._kept[key] = (value, now)
        self._kept.move_to_end(key)
        while len(self._kept) > self.most:
            self._kept.popitem(last=False)
        return value
