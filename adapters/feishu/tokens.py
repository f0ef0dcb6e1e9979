"""The tenant-token cache lark-oapi is given (one per process, shared by every client)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from lark_oapi.core.cache import ICache

__all__ = ["TENANT_TOKENS", "TenantTokenCache"]


class TenantTokenCache(ICache):  # type: ignore[misc]  # lark-oapi is untyped
    """Where lark-oapi keeps tenant tokens, keeping them as long as they are valid.

    The SDK hands `set` an absolute expiry (its `ICache` says so: a Unix timestamp, ten
    minutes before Feishu's) but its default cache adds that to the current time, so a
    token is never renewed and every call fails once it expires after two hours. Here
    the expiry is taken as written, and `forget` drops an app's token that Feishu
    refused, so the next call fetches a new one. Thread-safe: calls run in threads.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._entries: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str:
        with self._lock:
            value, expire = self._entries.get(key, ("", 0.0))
            if expire <= self._clock():
                self._entries.pop(key, None)
                return ""
            return value

    def set(self, key: str, value: str, expire: int) -> None:
        with self._lock:
            self._entries[key] = (value, float(expire))

    def forget(self, app_id: str) -> None:
        """Drop every token of `app_id` (the SDK's keys end with `:<app id>`)."""
        with self._lock:
            for key in [k for k in self._entries if k.endswith(f":{app_id}")]:
                del self._entries[key]


# lark-oapi keeps one token cache per process (a class attribute the client builder
# sets), so every adapter shares this one.
TENANT_TOKENS = TenantTokenCache()
