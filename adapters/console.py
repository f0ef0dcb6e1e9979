"""The terminal as a chat: `prdigest ask TEXT` answers once, `prdigest chat` keeps asking.

It speaks the same grammar and gives the same replies as Slack, Telegram and Feishu,
through the same `CommandHandler`; only the words are written to a stream instead of
posted. Text outside the grammar gets the help, as it would in chat.
"""

from __future__ import annotations

import asyncio
import getpass
import sys
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, ClassVar, TextIO

from starlette.routing import BaseRoute

from adapters.base import ChatAdapter
from adapters.delivering import NoArrivalLookup
from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.config import ChannelConfig, Config
from bot.models import Digest, Lang, Reply
from bot.render import render_digest, render_reply

CONSOLE_CHANNEL_ID = "local"
# Words that end `prdigest chat`; they are not commands, so the grammar never sees them.
EXIT_WORDS = frozenset({"quit", "exit", "bye", ":q", "退出", "再见"})
PROMPT = "prdigest> "


def console_channel(config: Config, repo: str, lang: Lang = "en") -> ChannelConfig:
    """The console's channel for `repo`: a `platform = "console"` channel of the config
    when there is one (its topics and admins apply), else one made up on the spot."""
    for channel in config.channels:
        if channel.platform == "console" and channel.repo.lower() == repo.lower():
            return channel
    repo_config = config.repo(repo)
    return ChannelConfig(platform="console", id=CONSOLE_CHANNEL_ID, repo=repo, lang=lang,
                         timezone=repo_config.timezone)


class ConsoleAdapter(NoArrivalLookup):
    """Replies written to a text stream, in plain text or Markdown. A terminal keeps no
    history to look in for a post in doubt."""

    platform: ClassVar[str] = "console"
    # A terminal takes any length; nothing is split.
    max_message_chars: ClassVar[int] = 0
    # Nothing is posted twice at a terminal, and nothing is deduplicated.
    dedupe_window: ClassVar[timedelta | None] = None
    max_inbound_bytes: ClassVar[int] = 0
    refusal_headers: ClassVar[Mapping[str, str]] = {}

    def __init__(
        self,
        handler: CommandHandler,
        channel: ChannelConfig,
        *,
        output: TextIO | None = None,
        fmt: str = "text",
        lang: Lang | None = None,
        user: str | None = None,
    ) -> None:
        self.handler = handler
        self.channel = channel
        self.output = output if output is not None else sys.stdout
        self.fmt = fmt
        self.lang = lang
        self.user = user if user is not None else getpass.getuser()

    # --- the adapter surface ------------------------------------------------------------

    async def start(self) -> None:
        """Nothing to connect."""

    def routes(self) -> list[BaseRoute]:
        """The console receives no webhooks."""
        return []

    def status(self) -> dict[str, Any]:
        return {"platform": self.platform, "configured": True, "mode": "terminal"}

    async def send_reply(self, channel_id: str, reply: Reply, *, thread: str | None = None,
                         idempotency_key: str | None = None) -> list[str]:
        """A terminal has no threads: the reply is printed."""
        self._write(render_reply(reply, self.fmt))
        return [channel_id]

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        self._write(render_digest(digest, "markdown" if self.fmt == "markdown" else "text"))
        return [channel_id]

    async def close(self) -> None:
        self.output.flush()

    # --- asking -------------------------------------------------------------------------

    async def answer(self, text: str) -> Reply:
        """The reply to one line of text, as chat would give it."""
        command = parse_command(text, lang=self.lang, default_lang=self.channel.lang)
        return await self.handler.handle(command, channel=self.channel, user=self.user)

    async def ask(self, text: str) -> Reply:
        """Answer one line and write the reply; the reply is returned for the exit code."""
        reply = await self.answer(text)
        await self.send_reply(self.channel.id, reply)
        return reply

    def chat(self, read_line: Callable[[str], str] = input, *, prompt: str = PROMPT) -> int:
        """Ask line after line until an exit word or end of input; returns how many lines
        were answered. Lines are read in the main thread (so Ctrl-C and Ctrl-D behave as
        in any shell) and answered on one event loop kept for the whole session."""
        answered = 0
        with asyncio.Runner() as runner:
            while True:
                try:
                    line = read_line(prompt)
                except (EOFError, KeyboardInterrupt):
                    self._write("")
                    return answered
                if line.strip().lower() in EXIT_WORDS:
                    return answered
                if not line.strip():
                    continue
                try:
                    runner.run(self.ask(line))
                except KeyboardInterrupt:
                    self._write("")  # Ctrl-C drops the question being answered
                    continue
                answered += 1

    def _write(self, text: str) -> None:
        self.output.write(text if text.endswith("\n") else text + "\n")
        self.output.flush()


# The console is checked against the one contract like every platform adapter.
_CONTRACT: type[ChatAdapter] = ConsoleAdapter
