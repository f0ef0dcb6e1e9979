"""What chats set up for themselves from chat (`follow owner/repo`, `schedule mon 9:00`,
`lang en`, `timezone Europe/Berlin`), kept in Redis so every replica sees a change at
once and none needs a restart.

One Redis hash holds every chat's settings (one field per chat, its settings as JSON)
and a revision that changes with every write: a replica reads the revision to know
whether anything changed, and the whole hash (one command, one Cluster slot) when it
did. No expiry: these are the chats' configuration, kept until a chat unfollows its last
repository (or an operator removes it with `prdigest channels --remove`). Topics a chat
follows stay in `bot.store.subscriptions`.

Redis errors are raised as they come (`bot.store.client.REDIS_ERRORS`): chat answers a
failed change with a friendly error, and a replica that cannot read keeps the settings
it read last (`bot.live.LiveConfig`).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Protocol

import msgspec
import redis

from bot.models import Lang
from bot.store.keys import KEY_PREFIX, Keys

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


class ChatSettings(msgspec.Struct, frozen=True, kw_only=True):
    """One chat's settings as set from chat; None leaves a setting to the config file's
    channel (where it lists the chat) or to the defaults.

    `private`: the followed repositories GitHub said were private when followed.
    `file_values`: for a channel the config file lists, the file's value of each setting
    chat replaced (`lang`, `schedule`, `timezone`), so that once the file says something
    else, the file wins again. `changed_by` (`platform:user`) and `changed_at`: the last
    change, for `prdigest channels`.
    """

    repos: tuple[str, ...] = ()
    private: tuple[str, ...] = ()
    lang: Lang | None = None
    schedule: str | None = None
    timezone: str | None = None
    file_values: dict[str, str] = {}
    changed_by: str = ""
    changed_at: datetime | None = None


class ChatSettingsStore(Protocol):
    """Chats' own settings by chat key (`slack:C0123`)."""

    def revision(self) -> str | None:
        """A token that changes with every write; None while nothing was ever stored."""
        ...

    def all(self) -> dict[str, ChatSettings]:
        """Every chat's settings (a chat whose entry cannot be read is left out)."""
        ...

    def get(self, chat: str) -> ChatSettings | None:
        """One chat's settings, or None."""
        ...

    def put(self, chat: str, settings: ChatSettings, *, most: int | None = None) -> bool:
        """Store a chat's settings; False (nothing stored) when the chat is new and
        `most` chats are stored already."""
        ...

    def remove(self, chat: str) -> None:
        """Forget a chat's settings; no change when there are none."""
        ...


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(ChatSettings)


def encode_settings(settings: ChatSettings) -> bytes:
    return _ENCODER.encode(settings)


def decode_settings(raw: bytes | str) -> ChatSettings | None:
    """A stored entry, or None when it cannot be read (written by a later version)."""
    try:
        return _DECODER.decode(raw.encode() if isinstance(raw, str) else raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisChatSettings:
    """`ChatSettingsStore` over one Redis hash. Synchronous (redis-py), as the protocol
    is: callers run it in a worker thread."""

    def __init__(self, client: redis.Redis, *, prefix: str = KEY_PREFIX) -> None:
        self.client = client
        self.key = Keys(prefix).chat_settings()

    def revision(self) -> str | None:
        value = self.client.hget(self.key, REVISION_FIELD)
        return None if value is None else _text(value)

    def all(self) -> dict[str, ChatSettings]:
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
        raw = self.client.hget(self.key, chat)
        return None if raw is None else decode_settings(raw)

    def put(self, chat: str, settings: ChatSettings, *, most: int | None = None) -> bool:
        stored = self.client.eval(_PUT, 1, self.key, chat, encode_settings(settings),
                                  uuid.uuid4().hex, -1 if most is None else most,
                                  REVISION_FIELD)
        return bool(stored)

    def remove(self, chat: str) -> None:
        self.client.eval(_REMOVE, 1, self.key, chat, uuid.uuid4().hex, REVISION_FIELD)
