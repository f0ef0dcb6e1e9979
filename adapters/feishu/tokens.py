"""The tenant-token cache lark-oapi is given (one per process, shared by every client)."""

from __future__ import annotations

import threading
import time

from lark_oapi.core.cache import ICache

from bot.clock import SYSTEM_CLOCK, Clock

__all__ = ["TENANT_TOKENS", "TenantTokenCache"]


class TenantTokenCache(ICache):  # type: ignore[misc]  # lark-oapi is untyped
    """Where lark-oapi keeps tenant tokens, keeping them as long as they are valid.

    The SDK hands `set` an absolute expiry (its `ICache` says so: a Unix timestamp, ten
    minutes before Feishu's) but its default cache adds that to the current time, so a
    token is never renewed and every call fails once it expires after two hours. Here
    the expiry is taken as written, and `forget` drops an app's token that Feishu
    refused, so the next call fetches a new one. Thread-safe: calls run in threads.

    The SDK writes that expiry on the machine's clock (`time.time()` plus the token's
    lifetime), so `set` reads the time left against the same clock once; from then on
    the token ages on `clock`, which a test's virtual clock moves past it at once.
    """

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        # key -> (token, the `clock.monotonic()` reading at which it expires)
        self._entries: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str:
        with self._lock:
            value, expires = self._entries.get(key, ("", float("-inf")))
            if expires <= self._clock.monotonic():
                self._entries.pop(key, None)
                return ""
            return value

    def set(self, key: str, value: str, expire: int) -> None:
        left = float(expire) - time.time()
        with self._lock:
            self._entries[key] = (value, self._clock.monotonic() + left)

    def forget(self, app_id: str) -> None:
        """Drop every token of `app_id` (the SDK's keys end with `:<app id>`)."""
        with self._lock:
            for key in [k for k in self._entries if k.endswith(f":{app_id}")]:
                del self._entries[key]


# lark-oapi keeps one token cache per process (a class attribute the client builder
# sets), so every adapter shares this one; it ages on the machine's clock, as the SDK
# that fills it does.
TENANT_TOKENS = TenantTokenCache()
