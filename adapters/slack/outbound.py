"""Slack outbound: messages posted part by part, with the delivery key in each part's
metadata, and looked up again in a channel's history for a post left in doubt; slash
commands answered on their `response_url`. One connection pool for all of it.

Every chat.postMessage waits for its turn in the workspace's and the channel's pacing
lanes (`bot.pacing`); a 429 holds those lanes off for its `Retry-After` - for every
replica when the lanes live in Redis - and the post is tried again in its next turn."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler, default_interval_calculator
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.interval_calculator import RetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.base import DeliveryError, ParentGone
from adapters.delivering import stopped_post
from adapters.http import Pool
from adapters.paced import Paced
from adapters.sending import (
    HoldOff,
    Outcome,
    Refused,
    Stopped,
    header_seconds,
    resume_parts,
    send_parts,
)
from adapters.slack.inbound import PLATFORM
from adapters.slack.payloads import DELIVERY_EVENT, delivery_metadata, post_arguments
from adapters.slack.render import SlackMessage
from bot.clock import SYSTEM_CLOCK, Clock
from bot.redaction import URL_PATH, Redact

logger = logging.getLogger(__name__)
# slack_sdk's webhook client logs the response_url it posts to (at DEBUG, and at INFO
# when it retries): a credential for answering, so only its host is written.
RESPONSE_URL_LOG = logging.getLogger("adapters.slack.response_url")
RESPONSE_URL_LOG.addFilter(Redact(URL_PATH))
# chat.postMessage's answer when `thread_ts` names a message that is gone (deleted).
THREAD_GONE = "thread_not_found"
# The connections open to Slack at once at most (aiohttp's default).
CONNECTIONS = 100
# How far before a delivery's first attempt its messages are looked for (clock skew).
HISTORY_MARGIN_SECONDS = 300


class ConnectionRetry(AsyncConnectionErrorRetryHandler):
    """A dropped or refused connection tried again as slack_sdk does by default, its
    back-off waited out on `clock` rather than the SDK's own sleep."""

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK,
                 interval_calculator: RetryIntervalCalculator = default_interval_calculator
                 ) -> None:
        super().__init__(interval_calculator=interval_calculator)
        self.clock = clock

    async def prepare_for_next_attempt_async(
            self, *, state: RetryState, request: HttpRequest,
            response: HttpResponse | None = None, error: Exception | None = None) -> None:
        state.next_attempt_requested = True
        await self.clock.sleep(
            self.interval_calculator.calculate_sleep_duration(state.current_attempt))
        state.increment_current_attempt()


class RateLimitRetryButPosts(AsyncRateLimitErrorRetryHandler):
    """HTTP 429 retried after its `Retry-After`, waited out on `clock`, except
    chat.postMessage's: a post is retried in its next turn of the pacing lanes
    (`SlackOutbound.post`), which the 429 has held off for every sender."""

    def __init__(self, *, max_retry_count: int, clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.clock = clock

    async def _can_retry_async(self, *, state: RetryState, request: HttpRequest,
                               response: HttpResponse | None = None,
                               error: Exception | None = None) -> bool:
        if request.url.rstrip("/").endswith("/chat.postMessage"):
            return False
        return await super()._can_retry_async(state=state, request=request,
                                              response=response, error=error)

    async def prepare_for_next_attempt_async(
            self, *, state: RetryState, request: HttpRequest,
            response: HttpResponse | None = None, error: Exception | None = None) -> None:
        if response is None:  # only a 429 is retried here, and it has an answer
            raise error or RuntimeError("a 429 retried without its answer")
        state.next_attempt_requested = True
        await self.clock.sleep(header_seconds(response.headers, "Retry-After"))
        state.increment_current_attempt()


def retry_handlers(rate_limit_retries: int = 2, *,
                   clock: Clock = SYSTEM_CLOCK) -> list[AsyncRetryHandler]:
    """Connection errors as slack_sdk retries them by default, plus HTTP 429 (but a
    post's): the wait its `Retry-After` asks for, then again (the SDK's default
    handlers do not); every wait on `clock`."""
    return [
        ConnectionRetry(clock=clock),
        RateLimitRetryButPosts(max_retry_count=rate_limit_retries, clock=clock),
    ]


def retry_after(error: SlackApiError) -> float | None:
    """The seconds a 429 asks to wait (one when it does not say), None for any other
    answer."""
    if error.response.status_code != 429:
        return None
    return header_seconds(error.response.headers, "Retry-After")


class SlackOutbound:
    """What the adapter sends through `client` (slack_sdk's, with `retry_handlers`):
    each post through the shared loop (`adapters.sending`) in its turn of its channel's
    lanes (`paced`); a 429 holds the lanes off."""

    def __init__(self, client: AsyncWebClient, retry_handlers: list[AsyncRetryHandler],
                 paced: Paced) -> None:
        self.client = client
        self.retry_handlers = retry_handlers
        self.paced = paced
        self._pool = Pool(CONNECTIONS)

    def session(self) -> aiohttp.ClientSession:
        """One connection pool for every outbound call (`adapters.http.Pool`): slack_sdk
        would otherwise open (and close) a session, and a TCP connection, per request."""
        self.client.session = self._pool.session()
        return self.client.session

    async def close(self) -> None:
        await self._pool.close()
        self.client.session = None

    def _poster(self, channel_id: str, total: int, key: str | None, thread_ts: str | None,
                event: str) -> Callable[[int, SlackMessage], Awaitable[str]]:
        """Posts part n of `total`, the delivery key in its metadata."""
        async def one(part: int, message: SlackMessage) -> str:
            metadata = delivery_metadata(key, part, total, event=event)
            return await self.post(channel_id, message, thread_ts, metadata=metadata)
        return one

    async def post_parts(self, channel_id: str, messages: list[SlackMessage],
                          key: str | None, *, found: Mapping[int, str] | None = None,
                          thread_ts: str | None = None,
                          event: str = DELIVERY_EVENT) -> list[str]:
        return await send_parts(
            messages, self._poster(channel_id, len(messages), key, thread_ts, event),
            found=found, failure=DeliveryError,
            stopped=functools.partial(_stopped, channel_id=channel_id))

    async def resume_parts(self, channel_id: str, messages: list[SlackMessage], key: str,
                           since: datetime, *, thread_ts: str | None = None,
                           event: str = DELIVERY_EVENT) -> list[str] | None:
        """A post left in doubt: the `ts` of its parts, after posting those the channel
        (or the thread of `thread_ts`) does not hold since `since`; None when it holds
        none, or its history cannot be read."""
        return await resume_parts(
            messages, self._poster(channel_id, len(messages), key, thread_ts, event),
            arrived=lambda: self.delivered_parts(channel_id, key, since, event=event,
                                                 thread=thread_ts),
            what=f"Slack {channel_id}, {event} {key}", failure=DeliveryError,
            stopped=functools.partial(_stopped, channel_id=channel_id))

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
        arguments = post_arguments(channel_id, message, thread_ts, metadata=metadata)

        async def call() -> str:
            response = await self.client.chat_postMessage(**arguments)
            return str(response.get("ts", ""))

        return await self.paced.send(
            call, functools.partial(_outcome, channel_id=channel_id, thread_ts=thread_ts),
            chat=channel_id, late=lambda late: DeliveryError(
                f"Slack is rate limited for chat.postMessage to {channel_id} for "
                f"{late.seconds:.0f} s more"))

    async def update(self, channel_id: str, ts: str, message: SlackMessage) -> None:
        """Put `message` in place of the bot's message `ts` (`chat.update`, at any age:
        a click's response_url lapses after 30 minutes)."""
        await self._call("chat.update", channel=channel_id, ts=ts, **message.as_post())

    async def post_ephemeral(self, channel_id: str, user_id: str, message: SlackMessage,
                             thread_ts: str | None = None) -> None:
        """`message` in `channel_id` for `user_id` alone (`chat.postEphemeral`)."""
        await self._call("chat.postEphemeral", channel=channel_id, user=user_id,
                         **({"thread_ts": thread_ts} if thread_ts else {}),
                         **message.as_post())

    async def _call(self, method: str, **arguments: Any) -> None:
        """One Web API call whose refusal is a `DeliveryError` naming the method."""
        self.session()
        try:
            await self.client.api_call(method, json=arguments)
        except SlackApiError as exc:
            data = exc.response.data
            error = data.get("error") if isinstance(data, dict) else None
            raise DeliveryError(f"Slack refused {method}: "
                                f"{error or exc.response.status_code}") from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DeliveryError(f"Slack could not be reached for {method}: "
                                f"{type(exc).__name__}") from None

    async def respond(self, response_url: str | None, message: SlackMessage, *,
                      replace: bool = False) -> None:
        """One answer through a slash command's or a click's response_url (the URL is a
        credential of sorts: it is never logged); `replace`: in place of the message
        clicked (`replace_original`)."""
        if response_url is None:
            raise DeliveryError("Slack gave no response_url to answer on")
        client = AsyncWebhookClient(url=response_url, retry_handlers=self.retry_handlers,
                                    session=self.session(), logger=RESPONSE_URL_LOG)
        try:
            response = await client.send_dict({
                **message.as_post(), "response_type": message.response_type,
                "unfurl_links": False, "unfurl_media": False,
                **({"replace_original": True} if replace else {}),
            })
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DeliveryError(
                f"Slack could not be reached on the response_url: {type(exc).__name__}"
            ) from None
        if response.status_code != 200:
            raise DeliveryError(
                f"Slack refused the response_url answer: HTTP {response.status_code} "
                f"{str(response.body)[:80]}")


def _outcome(exc: Exception, *, channel_id: str, thread_ts: str | None) -> Outcome:
    """Slack's error mapping for chat.postMessage: a 429 holds off for its Retry-After,
    anything else is refused."""
    if isinstance(exc, SlackApiError):
        wait = retry_after(exc)
        refusal = _refusal(exc, channel_id, thread_ts)
        return HoldOff(refusal, seconds=wait) if wait is not None else Refused(refusal)
    if isinstance(exc, (aiohttp.ClientError, TimeoutError)):
        return Refused(DeliveryError(f"Slack could not be reached for chat.postMessage to "
                                     f"{channel_id}: {type(exc).__name__}"))
    return Refused(exc)


def _stopped(stop: Stopped, *, channel_id: str) -> BaseException:
    """A split post stopped: its first part's error as it is (a `ParentGone` stays one),
    a later part's saying how many went before it (`adapters.delivering`)."""
    return stop.error if not stop.sent else stopped_post(
        stop, PLATFORM, channel_id, method="chat.postMessage", resend=False)


def _refusal(exc: SlackApiError, channel_id: str, thread_ts: str | None) -> DeliveryError:
    """What Slack's refusal of a post means: the thread gone, or why it refused."""
    # An error page instead of JSON leaves `data` a string.
    data = exc.response.data
    error = data.get("error") if isinstance(data, dict) else None
    if thread_ts and error == THREAD_GONE:
        return ParentGone(f"Slack {channel_id} has no message {thread_ts} to reply under")
    reason = error or f"HTTP {exc.response.status_code}"
    return DeliveryError(f"Slack refused chat.postMessage to {channel_id}: {reason}")
