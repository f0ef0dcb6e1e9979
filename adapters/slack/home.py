"""The Slack App Home tab: the channels this bot posts to that the reader is in, and
what each gets - its repositories, topics, weekly schedule, time zone and language, as
`settings` asked in that channel shows them (`bot.chat.overviews`).

"The reader's channels" are the channels Slack says the user is a member of
(`users.conversations` with the user's id, asked with the bot's token: public channels
the user is in, and private ones only where the bot is a member too - which it is in
every private channel it serves), plus the user's direct conversation with the bot. A
private channel's settings are so never shown to someone outside it. The membership is
read a bounded number of pages and kept a minute per user; a failure to read it shows a
friendly line instead of any channel. Settings are changed in the channel itself, by
those chat lets change them; the tab only shows them.

Slack app settings this needs: the bot event `app_home_opened`, the Home tab enabled,
and the bot scopes `channels:read`, `groups:read` (membership) and `users:read` (the
user's language, from their locale).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import DividerBlock
from slack_sdk.web.async_client import AsyncWebClient

from adapters.kept import Kept
from adapters.slack.admins import user_lang
from adapters.slack.inbound import PLATFORM
from adapters.slack.markup import CHANNEL_ID
from adapters.slack.render import encode
from bot.chat.overviews import ChatOverviews
from bot.clock import SYSTEM_CLOCK, Clock
from bot.models import Lang
from bot.render.document import Document
from bot.render.layouts import reply_document
from bot.render.overviews import chat_heading, more_chats, overview_opening

logger = logging.getLogger(__name__)

MAX_HOME_BLOCKS = 100
"""Slack's limit on a Home view's blocks."""
MEMBERSHIP_PAGES = 5
MEMBERSHIP_PAGE_SIZE = 200
"""`users.conversations` pages read per user at most (1,000 channels)."""
KEPT_SECONDS = 60.0
"""How long a user's membership and language are kept before Slack is asked again."""
KEPT_USERS = 1024


@dataclass(frozen=True)
class HomeOpened:
    """A verified `app_home_opened` event for the Home tab: who opened it, and their
    direct conversation with the bot."""

    user: str
    direct: str | None


def home_opened(body: Mapping[str, Any]) -> HomeOpened | None:
    """The Home tab opened in a verified delivery, or None (the Messages tab, or not
    such an event)."""
    event = body.get("event")
    if body.get("type") != "event_callback" or not isinstance(event, Mapping) \
            or event.get("type") != "app_home_opened" or event.get("tab") != "home":
        return None
    user, direct = event.get("user"), event.get("channel")
    if not isinstance(user, str) or not user:
        return None
    return HomeOpened(user=user, direct=direct if isinstance(direct, str)
                      and CHANNEL_ID.fullmatch(direct) and direct.startswith("D") else None)


@dataclass(frozen=True)
class _Reader:
    """What Slack said of a user, kept a while: their channels (None: unreadable) and
    their language."""

    channels: frozenset[str] | None
    lang: Lang


def _blocks(document: Document) -> list[dict[str, Any]]:
    """A document's Block Kit blocks, every message's in order."""
    return [block for message in encode(document) for block in message.blocks]


class SlackHome:
    """Publishes a user's Home tab (`views.publish`) when they open it. `overviews`
    None: the handler cannot tell the chats' settings (a test's), and nothing is
    published. `default_lang`: a user whose locale Slack does not give."""

    def __init__(self, client: AsyncWebClient, overviews: ChatOverviews | None, *,
                 default_lang: Lang = "en", clock: Clock = SYSTEM_CLOCK) -> None:
        self.client = client
        self.overviews = overviews
        self.default_lang = default_lang
        self.clock = clock
        self._readers: Kept[str, _Reader] = Kept(KEPT_SECONDS, KEPT_USERS, clock=clock)

    async def publish(self, opened: HomeOpened) -> None:
        """Publish `opened.user`'s Home tab; never raises (the log says why not)."""
        if self.overviews is None:
            return
        try:
            view = await self.view(opened)
            await self.client.views_publish(user_id=opened.user, view=view)
        except SlackApiError as exc:
            logger.warning("slack: Home tab of %s not published: %s", opened.user,
                           exc.response.get("error"))
        except Exception:
            logger.exception("slack: Home tab of %s failed", opened.user)

    async def view(self, opened: HomeOpened) -> dict[str, Any]:
        """The Home view of the user: the channels served that they are in
        (`bot.chat.overviews`, laid out by `bot.render.overviews`), as many as fit
        Slack's blocks."""
        assert self.overviews is not None
        reader = await self._readers.get(opened.user, lambda: self._read(opened.user))
        lang = reader.lang
        channels = ([] if reader.channels is None else
                    await self.overviews.theirs(PLATFORM, reader.channels, opened.direct))
        shown = _blocks(overview_opening(lang, readable=reader.channels is not None,
                                         chats=len(channels)))
        for index, channel in enumerate(channels):
            reply = await self.overviews.overview(channel, lang)
            part = [DividerBlock().to_dict(),
                    *_blocks(chat_heading(channel.id, lang, direct=channel.id == opened.direct)),
                    *_blocks(reply_document(reply))]
            left = len(channels) - index
            room = MAX_HOME_BLOCKS - len(shown) - (1 if left > 1 else 0)
            if len(part) > room:
                shown += _blocks(more_chats(left, lang))
                break
            shown += part
        return {"type": "home", "blocks": shown}

    # --- what Slack says of the user -----------------------------------------------

    async def _read(self, user: str) -> _Reader:
        return _Reader(channels=await self._memberships(user),
                       lang=await user_lang(self.client, user) or self.default_lang)

    async def _memberships(self, user: str) -> frozenset[str] | None:
        """The channels `user` is in, as Slack shows them to the bot; None when Slack
        would not say (a missing scope, an error)."""
        found: set[str] = set()
        cursor: str | None = None
        try:
            for _ in range(MEMBERSHIP_PAGES):
                page = await self.client.users_conversations(
                    user=user, types="public_channel,private_channel", exclude_archived=True,
                    limit=MEMBERSHIP_PAGE_SIZE, cursor=cursor)
                found |= {str(c["id"]) for c in page.get("channels") or ()
                          if isinstance(c, Mapping) and isinstance(c.get("id"), str)}
                cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
                if cursor is None:
                    return frozenset(found)
        except SlackApiError as exc:
            logger.warning("slack: channels of %s unreadable: %s", user,
                           exc.response.get("error"))
            return None
        logger.info("slack: %s is in more than %d channels; the Home tab lists those of "
                    "the first %d", user, MEMBERSHIP_PAGES * MEMBERSHIP_PAGE_SIZE,
                    MEMBERSHIP_PAGES * MEMBERSHIP_PAGE_SIZE)
        return frozenset(found)
