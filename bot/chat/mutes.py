"""Muting a chat's merged-PR notices from chat: `mute 1d`, `静音 3 天`, `mute` (until
`unmute`), `unmute`, `取消静音`.

A mute is a setting of the chat's, changed by those who may change its settings
(`bot.chat.settings.ChatSetup.check_asker`: `[chat].changes_by`, the chat's admins, a
file channel's `admins`); unlike the weekly schedule it is no part of the chat's
configuration, so a channel of the config file may be muted from chat whatever
`chat.file_channels` says. It is kept through the coordination port
(`bot.store.mutes`), where every replica's notices read it; the weekly digest is not
muted. The reply is the chat's settings with the mute in them, its end in the
chat's time zone.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from bot.chat.inbound import Asker
from bot.chat.refusals import echo, refuse
from bot.chat.settings import ChatSetup
from bot.config import ChannelConfig, Config
from bot.models import Command, Reply
from bot.store.coordination import StoreUnavailable
from bot.store.mutes import Mutes, mute_length

log = logging.getLogger(__name__)

MUTE_KINDS = frozenset({"mute", "unmute"})


class NoticeMuting:
    """Answers `mute` and `unmute` for the chats of the config in force. `mutes` is
    None where no store is shared with the notices (a server without Redis): a mute
    kept by this process alone would be lost at its next restart, so it is refused."""

    def __init__(self, setup: ChatSetup, mutes: Mutes | None) -> None:
        self.setup = setup
        self.mutes = mutes

    async def handle(self, command: Command, config: Config, channel: ChannelConfig | None,
                     asker: Asker | None) -> Reply:
        """The reply to a `mute` or `unmute` asked in `channel` (None: a chat not set up)."""
        mutes = self.mutes
        if asker is None or mutes is None:
            raise refuse(command, "settings-unavailable")
        if channel is None:
            raise refuse(command, "not-set-up")
        length = self._length(command) if command.kind == "mute" else None
        await self.setup.check_asker(command, config, channel, asker)
        by = f"{asker.chat.partition(':')[0]}:{asker.user or ''}"
        try:
            if command.kind == "mute":
                mute = await mutes.mute(channel.key, length, by=by)
                log.info("%s: notices muted until %s by %s", channel.key,
                         mute.until.isoformat() if mute.until else "unmuted", by)
                changed = "mute"
            else:
                was = await mutes.unmute(channel.key)
                log.info("%s: notices unmuted by %s%s", channel.key, by,
                         "" if was else " (they were not muted)")
                changed = "unmute" if was is not None else "not-muted"
        except StoreUnavailable as exc:
            log.warning("notice mute of %s not changed: %s", channel.key, exc)
            raise refuse(command, "settings-failed") from None
        return await self.setup.overview(command, config, channel.key, changed=changed)

    @staticmethod
    def _length(command: Command) -> timedelta | None:
        """How long the mute lasts; refused with the bounds when it cannot be read or
        is out of them (`mute 0d`, `mute 999 years`, `mute banana`)."""
        try:
            return mute_length(command.value)
        except ValueError:
            raise refuse(command, "mute-length",
                         text=echo(command.text or f"mute {command.value}")) from None
