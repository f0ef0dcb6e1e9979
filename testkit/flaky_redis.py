"""An asyncio Redis client that goes down on cue, for fault tests of what a blip costs.

`FlakyRedis(inner)` passes every command to `inner` until it is down: then each one
raises redis-py's `ConnectionError`, as a client does while the server is away. It goes
down when told (`down = True`) or at a command naming a key that holds `down_on` (the
first such command after `passing` of them went through), so a test can stop Redis at
an exact step of the work under test; it comes back when told (`down = False`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError


class FlakyRedis:
    """Forwards to `inner`; while `down`, every command fails as on a lost server."""

    def __init__(self, inner: aioredis.Redis, *, down_on: str | None = None,
                 passing: int = 0) -> None:
        self.inner = inner
        self.down = False
        self.down_on = down_on
        self.passing = passing
        self.refused: list[str] = []

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if not callable(target):
            return target
        return self._guarded(name, target)

    def _guarded(self, name: str, target: Callable[..., Awaitable[Any]]
                 ) -> Callable[..., Awaitable[Any]]:
        async def command(*args: Any, **kwargs: Any) -> Any:
            if self.down_on is not None and any(
                    self.down_on in _text(arg) for arg in args):
                if self.passing > 0:
                    self.passing -= 1
                else:
                    self.down, self.down_on = True, None
            if self.down:
                self.refused.append(name)
                raise RedisConnectionError("Redis is down (injected)")
            return await target(*args, **kwargs)
        return command


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value if isinstance(value, str) else ""
