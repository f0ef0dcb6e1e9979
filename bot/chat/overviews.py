"""What each chat a platform serves gets and when, outside any chat: the chats of the
config in force on one platform, and each one's `settings` answer - the same overview
a `settings` asked in that chat shows (`ChatSetup.overview`), in the reader's
language. A reader outside the chats sees only those they are in (`theirs`): the
platform tells which chats those are, so a private chat's settings never reach someone
outside it."""

from __future__ import annotations

from collections.abc import Collection

from bot.chat.handler import CommandHandler
from bot.config import ChannelConfig
from bot.models import Command, Lang, Reply


class ChatOverviews:
    """The chats of one handler's config in force, and their settings."""

    def __init__(self, handler: CommandHandler) -> None:
        self.handler = handler

    async def served(self, platform: str) -> list[ChannelConfig]:
        """The chats on `platform` the bot serves now (file's and chat-made), read
        again where another replica may have changed the chats' own settings."""
        if self.handler.live is not None:
            await self.handler.live.refresh()
        return [channel for channel in self.handler.config.channels
                if channel.platform == platform]

    async def theirs(self, platform: str, member_of: Collection[str],
                     direct: str | None = None) -> list[ChannelConfig]:
        """The chats on `platform` the bot serves that a reader is in: those the
        platform says they are a member of, and `direct`, their direct chat with the
        bot; in the order of the config."""
        chats = set(member_of) | ({direct} if direct else set())
        return [channel for channel in await self.served(platform) if channel.id in chats]

    async def overview(self, channel: ChannelConfig, lang: Lang) -> Reply:
        """The `settings` reply of `channel`, in `lang`."""
        command = Command(kind="settings", lang=lang, text="settings")
        return await self.handler.setup.overview(command, self.handler.config, channel.key,
                                                 changed="")
