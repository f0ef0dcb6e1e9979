"""What chats set up for themselves from chat (`follow owner/repo`, `schedule mon 9:00`,
`lang en`, `timezone Europe/Berlin`), kept in Redis (`bot.store.redis.chat_settings`)
so every replica sees a change at once and none needs a restart.

The store keeps every chat's settings and a revision that changes with every write: a
replica reads the revision to know whether anything changed, and every chat's settings
when it did. No expiry: these are the chats' configuration, kept until a chat unfollows
its last repository (or an operator removes it with `prdigest channels --remove`).
Topics a chat follows stay in `bot.store.subscriptions`.

A store that cannot be reached raises `StoreUnavailable`: chat answers a failed change
with a friendly error, and a replica that cannot read keeps the settings it read last
(`bot.live.LiveConfig`). Without Redis there is no store: chats cannot set themselves
up (their settings would not outlive the process).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

import msgspec

from bot.models import Lang


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
