"""Chats' own settings in Redis (`bot.store.chat_settings.ChatSettingsStore`): one hash
holds every chat's settings (one field per chat, its settings as JSON) and the revision
(one command, one Cluster slot, reads them all)."""

from __future__ import annotations

import uuid
from typing import Any

import redis

from bot.store.chat_settings import ChatSettings, decode_settings, encode_settings
from bot.store.keys import KEY_PREFIX, Keys
from bot.store.redis.client import unavailable_as_store_error

REVISION_FIELD = "~revision"
"""The hash's field holding its revision; no chat key (`platform:id`) starts with `~`."""

# KEYS[1] the hash; ARGV: chat, settings, new revision, most chats (-1: any number).
# A chat not yet there is added only while fewer than the most are.
_PUT = """
if tonumber(ARGV[4]) >= 0 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  local held = redis.call('HLEN', KEYS[1]) - redis.call('HEXISTS', KEYS[1], ARGV[5])
  if held >= tonumber(ARGV[4]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[5], ARGV[3])
return 1
"""
# KEYS[1] the hash; ARGV: chat, new revision, the revision field.
_REMOVE = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[3], ARGV[2])
end
return 1
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisChatSettings:
    """`ChatSettingsStore` over one Redis hash. Synchronous (redis-py), as the protocol
    is: callers run it in a worker thread. Redis away is `StoreUnavailable`."""

    def __init__(self, client: redis.Redis, *, prefix: str = KEY_PREFIX) -> None:
        self.client = client
        self.key = Keys(prefix).chat_settings()

    def revision(self) -> str | None:
        with unavailable_as_store_error():
            value = self.client.hget(self.key, REVISION_FIELD)
        return None if value is None else _text(value)

    def all(self) -> dict[str, ChatSettings]:
        with unavailable_as_store_error():
            entries: dict[Any, Any] = self.client.hgetall(self.key)
        found: dict[str, ChatSettings] = {}
        for field, raw in entries.items():
            chat = _text(field)
            if chat == REVISION_FIELD:
                continue
            settings = decode_settings(raw)
            if settings is not None:
                found[chat] = settings
        return found

    def get(self, chat: str) -> ChatSettings | None:
        with unavailable_as_store_error():
            raw = self.client.hget(self.key, chat)
        return None if raw is None else decode_settings(raw)

    def put(self, chat: str, settings: ChatSettings, *, most: int | None = None) -> bool:
        with unavailable_as_store_error():
            stored = self.client.eval(_PUT, 1, self.key, chat, encode_settings(settings),
                                      uuid.uuid4().hex, -1 if most is None else most,
                                      REVISION_FIELD)
        return bool(stored)

    def remove(self, chat: str) -> None:
        with unavailable_as_store_error():
            self.client.eval(_REMOVE, 1, self.key, chat, uuid.uuid4().hex, REVISION_FIELD)
