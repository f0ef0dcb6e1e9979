"""Slack unfurls: a GitHub PR link pasted in a channel that follows its repository gets
a compact preview under the message (`link_shared` -> `chat.unfurl`): the PR linked
with its title and state, who wrote it, its type and topics, and its risks - the chat's
own `summary` / `risks for #N` answer (`bot.chat.previews`), worded as those are.

A link to a repository the channel does not follow, or posted where no channel is set
up (the message composer, a chat the bot does not serve), is left alone: no lookup, no
`chat.unfurl` call, so nothing of a private repository reaches a channel not following
it. Each delivery is unfurled once across Slack's retries and the replicas (the claims
questions use). Everything from GitHub is escaped as Slack mrkdwn in `verbatim` text,
so a title's `<!channel>` or `<@U1>` pings nobody and links nowhere.

Slack app settings this needs: the bot scopes `links:read` and `links:write`, the bot
event `link_shared`, and `github.com` among the app's unfurl domains.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.fields import str_or_none as _str
from adapters.once import Once
from adapters.slack.inbound import PLATFORM, delivery_key
from adapters.slack.render import encode
from bot.chat.inbound import FirstSeen
from bot.chat.previews import MAX_LINKS_READ, PullPreviews
from bot.logs import delivery
from bot.render.document import Document

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LinkShared:
    """A verified `link_shared` event: where the links were posted (`channel`, the
    message's `ts`), the addresses, and the delivery's key across Slack's retries."""

    channel: str
    ts: str
    urls: tuple[str, ...]
    key: str | None
    user: str | None = None


def link_shared(body: Mapping[str, Any]) -> LinkShared | None:
    """The links of a verified Events API `link_shared` delivery, or None when it holds
    none or is not one."""
    event = body.get("event")
    if body.get("type") != "event_callback" or not isinstance(event, Mapping) \
            or event.get("type") != "link_shared":
        return None
    channel, ts = _str(event.get("channel")), _str(event.get("message_ts"))
    links = event.get("links")
    if channel is None or ts is None or not isinstance(links, list):
        return None
    urls = tuple(url for link in links[:MAX_LINKS_READ] if isinstance(link, Mapping)
                 and (url := _str(link.get("url"))) is not None)
    if not urls:
        return None
    return LinkShared(channel=channel, ts=ts, urls=urls, key=delivery_key(body),
                      user=_str(event.get("user")))


def unfurl_blocks(document: Document) -> list[dict[str, Any]]:
    """A preview's blocks (`bot.render.previews`): the PR's heading and facts, then its
    risks in small print."""
    return list(encode(document)[0].blocks)


class SlackUnfurls:
    """Answers `link_shared` deliveries with `chat.unfurl`. `previews` None: the handler
    cannot look PRs up (a test's), and links are left alone."""

    def __init__(self, client: AsyncWebClient, previews: PullPreviews | None,
                 deduper: FirstSeen) -> None:
        self.client = client
        self.previews = previews
        self.once = Once(deduper, PLATFORM)

    async def unfurl(self, shared: LinkShared) -> None:
        """Preview the followed PR links of an admitted delivery; never raises (the
        log says what went wrong), and records the delivery answered once done."""
        with delivery(shared.key):
            sent = False
            try:
                await self._unfurl(shared)
                sent = True
            except SlackApiError as exc:
                logger.warning("slack: chat.unfurl in %s failed: %s", shared.channel,
                               exc.response.get("error"))
            except Exception:
                logger.exception("slack: previewing links in %s failed", shared.channel)
            await self.once.record(shared.key, done=sent)

    async def _unfurl(self, shared: LinkShared) -> None:
        """The previews `bot.chat.previews` shows in this channel, as `chat.unfurl`."""
        if self.previews is None:
            return
        shown = await self.previews.shown(f"{PLATFORM}:{shared.channel}", shared.urls)
        if not shown:
            return
        unfurls = {url: {"blocks": unfurl_blocks(document)} for url, document in shown}
        await self.client.chat_unfurl(channel=shared.channel, ts=shared.ts, unfurls=unfurls)
        logger.info("slack: %d PR link(s) unfurled in %s", len(unfurls), shared.channel)
