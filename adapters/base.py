"""The one contract between the core and a chat platform.

An adapter turns its platform's payloads into a neutral `Question` for the shared
`bot.chat.inbound.Inbox`, renders the `Reply` with its platform's renderer and sends
it; it posts digests. It never computes report content. What a platform can do is
declared here as attributes and methods every adapter has - the core never probes.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, ClassVar, Protocol

from starlette.routing import BaseRoute

from bot.chat.inbound import CommandAnswering, FirstSeen
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config
from bot.errors import DeliveryInDoubt, ThreadGone
from bot.models import Digest, Reply
from bot.pacing import Pacer


class ChatAdapter(Protocol):
    """What the server, the scheduler and `prdigest post` use of a platform."""

    platform: ClassVar[str]
    # Declared limits, used by the shared splitter (`bot.render.split_sections`).
    max_message_chars: ClassVar[int]
    # How long the platform drops a re-send carrying the same idempotency key (Feishu's
    # `uuid`: one hour); None where a key does not stop a second post.
    dedupe_window: ClassVar[timedelta | None]
    # The largest request body its webhook routes take; the server refuses bigger ones
    # before reading them (`bot.web.body_limit`), adding these headers to the refusal
    # (a platform that re-sends a refused delivery may be told not to).
    max_inbound_bytes: ClassVar[int]
    refusal_headers: ClassVar[Mapping[str, str]]

    async def start(self) -> None:
        """Connect what needs connecting (socket mode, long polling); idempotent."""
        ...

    def routes(self) -> list[BaseRoute]:
        """The webhook routes this platform receives on, mounted by the server."""
        ...

    def status(self) -> dict[str, Any]:
        """What /healthz shows of this adapter; never a secret value."""
        ...

    async def send_reply(self, channel_id: str, reply: Reply, *, thread: str | None = None,
                         idempotency_key: str | None = None) -> list[str]:
        """Post a reply to a channel, under the message `thread` when given; returns
        the platform's message ids. Raises `ParentGone` when `thread` is no longer
        there and nothing was posted. The key is the same for every retry of one
        notice (a platform with idempotency keys posts it once)."""
        ...

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        """Post a weekly digest; raises when the platform did not confirm it. The key is
        the same for every retry of one delivery (see `dedupe_window`)."""
        ...

    async def complete_delivery(self, channel_id: str, digest: Digest, *,
                                idempotency_key: str, since: datetime) -> list[str] | None:
        """For a delivery left in doubt: its message ids when the platform shows it
        arrived (posting any part missing), None when it cannot tell."""
        ...

    async def complete_reply(self, channel_id: str, reply: Reply, *, idempotency_key: str,
                             since: datetime, thread: str | None = None) -> list[str] | None:
        """For a notice left in doubt (its sender died between the platform's answer and
        recording it): its message ids when the platform shows it arrived since `since`,
        in the channel or under `thread` (posting any part missing); None when it cannot
        tell or nothing arrived."""
        ...

    async def close(self) -> None:
        ...


class AdapterFactory(Protocol):
    """A platform adapter's class: builds the adapter the config and environment
    describe, or None when its secrets are not set. `overrides` replace constructor
    arguments (tests point the SDK at a fake server).

    Its limits are its own: each message it posts waits for a turn in the lanes its
    `[platforms.<name>]` settings declare (`post_lanes`: the bot's, the chat's, at the
    platform's documented rates) on `pacer` - the lanes every replica shares in Redis
    (`bot.store.pacing.SharedPacer`), or this process's own when None - and a 429 holds
    those lanes off for its Retry-After.

    Its time is the process's `clock`: every wait that is its behaviour (a hold-off, a
    back-off, an inbox's patience) and every age it keeps (a token's, a cached
    answer's) pass on it, so a test's virtual clock runs them at once."""

    def from_config(self, config: Config, handler: CommandAnswering, deduper: FirstSeen, *,
                    pacer: Pacer | None = None, clock: Clock = SYSTEM_CLOCK,
                    **overrides: Any) -> ChatAdapter | None: ...


class PayloadBuilder(Protocol):
    """A platform's payload module: the requests its adapter sends, as JSON-ready dicts,
    built by the one code that sends them (previews print them)."""

    METHOD: str

    def digest_payloads(self, channel_id: str, digest: Digest, *, key: str | None = None
                        ) -> list[dict[str, Any]]:
        """The requests of a digest delivered with the delivery key `key`."""
        ...

    def reply_payloads(self, channel_id: str, reply: Reply) -> list[dict[str, Any]]: ...

    def viewer_url(self, payload: dict[str, Any]) -> str | None:
        """A page of the platform's that shows the payload laid out, if it has one."""
        ...


def no_viewer(payload: dict[str, Any]) -> str | None:
    """`viewer_url` of a platform that has no public page laying a message out."""
    return None


class DeliveryError(Exception):
    """The platform refused or failed a post; the message says which and why (no secrets)."""


class PostInDoubt(DeliveryError, DeliveryInDoubt):
    """The post went out and its answer never came: the platform may have taken it.
    The schedule holds it or sends it again, as `resend` (the platform's setting) says."""


class ParentGone(DeliveryError, ThreadGone):
    """The message a reply was to go under is gone (deleted, recalled); nothing was posted."""


def proxies_in_environment() -> bool:
    """Whether HTTP(S)_PROXY & co are set. aiohttp only reads them with `trust_env`,
    which also reads ~/.netrc in a worker thread before every request; sessions turn
    it on only when there is a proxy to use."""
    # NO_PROXY alone shows up as "no": a list of exceptions, not a proxy.
    return any(scheme != "no" for scheme in urllib.request.getproxies())
