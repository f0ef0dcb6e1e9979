"""Slack outbound: messages posted part by part, with the delivery key in each part's
metadata, and looked up again in a channel's history for a post left in doubt; slash
commands answered on their `response_url`. One connection pool for all of it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.base import DeliveryError, ParentGone
from adapters.slack.payloads import DELIVERY_EVENT, delivery_metadata, post_arguments
from adapters.slack.render import SlackMessage
from bot.redaction import URL_PATH, Redact

logger = logging.getLogger(__name__)
# slack_sdk's webhook client logs the response_url it posts to (at DEBUG, and at INFO
# when it retries): a credential for answering, so only its host is written.
RESPONSE_URL_LOG = logging.getLogger("adapters.slack.response_url")
RESPONSE_URL_LOG.addFilter(Redact(URL_PATH))
# chat.postMessage's answer when `thread_ts` names a message that is gone (deleted).
THREAD_GONE = "thread_not_found"
# How far before a delivery's first attempt its messages are looked for (clock skew).
HISTORY_MARGIN_SECONDS = 300


def retry_handlers(rate_limit_retries: int = 2) -> list[AsyncRetryHandler]:
    """Connection errors as slack_sdk retries them by default, plus HTTP 429: the SDK
    sleeps for `Retry-After` and tries again (its default handlers do not)."""
    return [
        AsyncConnectionErrorRetryHandler(),
        AsyncRateLimitErrorRetryHandler(max_retry_count=rate_limit_retries),
    ]


class SlackOutbound:
    """What the adapter sends through `client` (slack_sdk's, with `retry_handlers`)."""

    def __init__(self, client: AsyncWebClient, retry_handlers: list[AsyncRetryHandler]
                 ) -> None:
        self.client = client
        self.retry_handlers = retry_handlers
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        """One connection pool for every outbound call: slack_sdk would otherwise open
        (and close) a session, and a TCP connection, per request. Created on first use,
        inside the running loop."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
            self.client.session = self._session
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
            self.client.session = None

    async def post_parts(self, channel_id: str, messages: list[SlackMessage],
                          key: str | None, *, found: Mapping[int, str] | None = None,
                          thread_ts: str | None = None,
                          event: str = DELIVERY_EVENT) -> list[str]:
        posted: list[str] = []
        found = found or {}
        for part, message in enumerate(messages):
            if part in found:
                posted.append(found[part])
                continue
            metadata = delivery_metadata(key, part, len(messages), event=event)
            try:
                posted.append(await self.post(channel_id, message, thread_ts,
                                               metadata=metadata))
            except DeliveryError as exc:
                if posted:
                    raise DeliveryError(
                        f"{exc} (after {len(posted)} of {len(messages)} parts were posted)"
                    ) from None
                raise
        return posted

    async def delivered_parts(self, channel_id: str, key: str, since: datetime, *,
                               event: str = DELIVERY_EVENT, thread: str | None = None
                               ) -> dict[int, str]:
        """{part: ts} of the messages in the channel (or the thread of `thread`) that
        carry `key` in metadata of type `event`."""
        self.session()
        oldest = f"{since.timestamp() - HISTORY_MARGIN_SECONDS:.6f}"
        try:
            if thread is None:
                response = await self.client.conversations_history(
                    channel=channel_id, oldest=oldest, limit=200, include_all_metadata=True)
            else:
                response = await self.client.conversations_replies(
                    channel=channel_id, ts=thread, oldest=oldest, limit=200,
                    include_all_metadata=True)
        except SlackApiError as exc:
            data = exc.response.data
            error = data.get("error") if isinstance(data, dict) else None
            if thread is not None and error == "thread_not_found":
                # The digest was deleted: the caller looks in the channel next.
                logger.info("Slack thread %s in %s is gone", thread, channel_id)
                return {}
            logger.warning("cannot read the history of Slack %s (%s): a post in doubt "
                           "there may be sent again", channel_id,
                           error or exc.response.status_code)
            return {}
        except (aiohttp.ClientError, TimeoutError) as exc:
            logger.warning("cannot read the history of Slack %s (%s)", channel_id,
                           type(exc).__name__)
            return {}
        parts: dict[int, str] = {}
        for message in response.get("messages") or []:
            metadata = message.get("metadata") or {}
            payload = metadata.get("event_payload") or {}
            part = payload.get("part")
            if (metadata.get("event_type") == event and payload.get("delivery") == key
                    and isinstance(part, int)):
                parts[part] = str(message.get("ts", ""))
        return parts

    async def post(self, channel_id: str, message: SlackMessage,
                    thread_ts: str | None = None, *,
                    metadata: dict[str, Any] | None = None) -> str:
        self.session()
        try:
            response = await self.client.chat_postMessage(
                **post_arguments(channel_id, message, thread_ts, metadata=metadata))
        except SlackApiError as exc:
            # An error page instead of JSON leaves `data` a string.
            data = exc.response.data
            error = data.get("error") if isinstance(data, dict) else None
            reason = error or f"HTTP {exc.response.status_code}"
            if thread_ts and error == THREAD_GONE:
                raise ParentGone(f"Slack {channel_id} has no message {thread_ts} to "
                                 "reply under") from None
            raise DeliveryError(
                f"Slack refused chat.postMessage to {channel_id}: {reason}") from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DeliveryError(
                f"Slack could not be reached for chat.postMessage to {channel_id}: "
                f"{type(exc).__name__}") from None
        return str(response.get("ts", ""))

    async def respond(self, response_url: str, message: SlackMessage) -> None:
        """One answer through a slash command's response_url (the URL is a credential of
        sorts: it is never logged)."""
        client = AsyncWebhookClient(url=response_url, retry_handlers=self.retry_handlers,
                                    session=self.session(), logger=RESPONSE_URL_LOG)
        try:
            response = await client.send_dict({
                **message.as_post(), "response_type": message.response_type,
                "unfurl_links": False, "unfurl_media": False,
            })
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DeliveryError(
                f"Slack could not be reached on the response_url: {type(exc).__name__}"
            ) from None
        if response.status_code != 200:
            raise DeliveryError(
                f"Slack refused the response_url answer: HTTP {response.status_code} "
                f"{str(response.body)[:80]}")
