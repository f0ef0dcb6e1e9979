"""The small surface every chat platform implements: start, routes, send, close.

An adapter turns its platform's payloads into a neutral `Command`, asks the
`CommandHandler` for a `Reply`, renders it with its platform's renderer and sends it.
It never computes report content.
"""

from __future__ import annotations

import urllib.request
from typing import ClassVar, Protocol

from starlette.routing import BaseRoute

from bot.models import Digest, Reply


class ChatAdapter(Protocol):
    platform: ClassVar[str]
    # Declared limits, used by the shared splitter (`bot.render.split_sections`).
    max_message_chars: ClassVar[int]

    async def start(self) -> None:
        """Connect what needs connecting (socket mode, long polling); idempotent."""
        ...

    def routes(self) -> list[BaseRoute]:
        """The webhook routes this platform receives on, mounted by the server."""
        ...

    async def send_reply(self, channel_id: str, reply: Reply) -> list[str]:
        """Post a reply to a channel; returns the platform's message ids."""
        ...

    async def post_digest(self, channel_id: str, digest: Digest) -> list[str]:
        """Post a weekly digest; raises when the platform did not confirm it."""
        ...

    async def close(self) -> None:
        ...


class DeliveryError(Exception):
    """The platform refused or failed a post; the message says which and why (no secrets)."""


def proxies_in_environment() -> bool:
    """Whether HTTP(S)_PROXY & co are set. aiohttp only reads them with `trust_env`,
    which also reads ~/.netrc in a worker thread before every request; sessions turn
    it on only when there is a proxy to use."""
    # NO_PROXY alone shows up as "no": a list of exceptions, not a proxy.
    return any(scheme != "no" for scheme in urllib.request.getproxies())
