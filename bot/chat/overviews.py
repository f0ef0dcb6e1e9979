"""What each chat a platform serves gets and when, outside any chat: the chats of the
config in force on one platform, and each one's `settings` answer - the same overview
a `settings` asked in that chat shows (`ChatSetup.overview`), in the reader's
language. Which of the chats a reader may see is the platform's to decide."""

from __future__ import annotations

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

    async def overview(self, channel: ChannelConfig, lang: Lang) -> Reply:
        """The `settings` reply of `channel`, in `lang`."""
        command = Command(kind="settings", lang=lang, text="settings")
        return await self.handler.setup.overview(command, self.handler.config, channel.key,
                                                 changed="")
