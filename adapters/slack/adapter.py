"""Slack: `/prdigest`, app mentions and direct messages in; Block Kit answers out.

Bolt (`AsyncApp`) does the platform work: v0 signature check with its 5-minute window
(401 and nothing else on failure), url_verification, ignoring the bot's own events,
Socket Mode. This adapter adds what Bolt leaves out: acknowledging at once and answering
afterwards, one answer per question across Slack's retries (Redis via `Claims`), and
retrying a rate-limited call after its `Retry-After`.

The same listeners serve HTTP (`POST /slack/events`, slash commands, events and button
clicks alike) and Socket Mode, which Bolt feeds through one dispatch path.

Slack app settings this expects: the `/prdigest` slash command, Event Subscriptions and
Interactivity all at `<public_url>/slack/events`; bot events `app_mention` and
`message.im` (and `link_shared`, `app_home_opened`: `adapters.slack.unfurls`,
`adapters.slack.home` say what they need); bot scopes `commands`, `app_mentions:read`,
`chat:write`, `im:history`, and `channels:history` / `groups:history` so that a weekly
post or a merged-PR notice left in doubt by a crash is looked up in the channel instead
of sent twice; `users:read` for who may change a channel's settings and a clicker's
language (buttons that act: `adapters.slack.clicks`). For Socket Mode instead:
`platforms.slack.socket_mode = true` and an app-level token with `connections:write`.
What is sent, and how, is `adapters.slack.outbound`.
"""

from __future__ import annotations

import functools
import logging
import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar

from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from adapters.answering import answer, take
from adapters.background import Background
from adapters.base import DeliveryError
from adapters.overrides import settings_with
from adapters.paced import Paced
from adapters.sending import Limits
from adapters.slack.admins import is_chat_admin
from adapters.slack.clicks import (
    click_response_url,
    clicked_message,
    question_from_click,
    team_of,
    with_clicker_lang,
)
from adapters.slack.home import SlackHome, home_opened
from adapters.slack.inbound import (
    SLASH_COMMAND,
    foreign_app,
    read_question,
    response_url,
    unheard,
)
from adapters.slack.outbound import SlackOutbound, retry_handlers
from adapters.slack.payloads import NOTICE_EVENT
from adapters.slack.render import (
    ACTION_PREFIX,
    MAX_BLOCKS,
    MAX_SECTION_CHARS,
    SlackMessage,
    render_digest_messages,
    render_reply_messages,
)
from adapters.slack.settings import (
    SlackSecrets,
    SlackSettings,
    missing_secrets,
    slack_secrets,
    slack_settings,
)
from adapters.slack.unfurls import SlackUnfurls, link_shared
from bot.chat.grammar import DEFAULT_BOT_NAMES
from bot.chat.handler import CommandHandler
from bot.chat.inbound import CommandAnswering, FirstSeen, Inbox, Question
from bot.chat.overviews import ChatOverviews
from bot.chat.previews import PullPreviews
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config
from bot.models import Admission, Digest, Lang, Reply
from bot.pacing import MAX_TURN_WAIT, LocalPacer, Pacer
from bot.redaction import URL_PATH, Redact

logger = logging.getLogger(__name__)
# Bolt quotes a request body it could not acknowledge in time: a slash command's holds it.
BOLT_LOG = logging.getLogger("adapters.slack.bolt")
BOLT_LOG.addFilter(Redact(URL_PATH))

EVENTS_PATH = "/slack/events"
# Slack accepts up to 5 answers per response_url (within 30 minutes).
RESPONSE_URL_POSTS = 5
# Slack's own payloads are a few kilobytes; anything far larger is not from Slack.
MAX_BODY_BYTES = 1 << 20
# Slack's signature headers as Slack writes them: Unix seconds, and `v0=` with hex.
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


# A message is tried three times while Slack answers 429; no turn is waited for longer
# than `bot.pacing.MAX_TURN_WAIT`.
SLACK_LIMITS = Limits(attempts=3, max_wait=MAX_TURN_WAIT)


class SlackAdapter:
    """One Slack workspace's bot: answers questions, posts digests and replies."""

    platform: ClassVar[str] = "slack"
    max_message_chars: ClassVar[int] = MAX_SECTION_CHARS
    max_blocks: ClassVar[int] = MAX_BLOCKS
    # Slack has no idempotency key: a re-send posts again (`complete_delivery` looks).
    dedupe_window: ClassVar[timedelta | None] = None
    max_inbound_bytes: ClassVar[int] = MAX_BODY_BYTES
    # A refused delivery would come again: Slack honours this header.
    refusal_headers: ClassVar[Mapping[str, str]] = {"X-Slack-No-Retry": "1"}
    # The language of `#7035` asked in a channel the config does not list.
    default_lang: ClassVar[Lang] = "en"

    def __init__(
        self,
        config: Config,
        handler: CommandAnswering,
        deduper: FirstSeen,
        credentials: SlackSecrets,
        settings: SlackSettings | None = None,
        *,
        outbound_only: bool = False,
        pacer: Pacer | None = None,
        clock: Clock = SYSTEM_CLOCK,
        limits: Limits = SLACK_LIMITS,
        bot_names: tuple[str, ...] = DEFAULT_BOT_NAMES,
    ) -> None:
        """`settings`: the config's `[platforms.slack]` (its API, Socket Mode, the pace
        of posts; default: `config`'s); `outbound_only`: only posts (`prdigest post`),
        which needs the bot token alone; `limits`: how hard a message is tried (a 429
        is tried again twice, the longest wait for a turn `MAX_TURN_WAIT`)."""
        settings = settings if settings is not None else slack_settings(config)
        socket_mode, api_url = settings.socket_mode and not outbound_only, settings.api_url
        bot_token, signing_secret = credentials.bot_token, credentials.signing_secret
        app_token = credentials.app_token
        missing = missing_secrets(settings, credentials, outbound_only=outbound_only)
        if missing:
            mode = "Posting" if outbound_only else "Socket Mode" if socket_mode else "HTTP mode"
            raise ValueError(f"{mode} needs {' and '.join(missing.values())}: set "
                             f"{' and '.join(missing)}")
        self.config = config
        self.settings = settings
        self.socket_mode = socket_mode
        self.api_url = api_url
        self.bot_names = bot_names
        self._http_enabled = bool(signing_secret)
        self._app_token = app_token
        handlers = retry_handlers(limits.tries - 1, clock=clock)
        self.client = AsyncWebClient(token=bot_token, base_url=api_url,
                                     retry_handlers=handlers)
        self.inbox = Inbox(handler, deduper, default_lang=self.default_lang,
                           chat_admins=functools.partial(is_chat_admin, self.client), clock=clock)
        self.outbound = SlackOutbound(self.client, handlers, Paced(
            pacer if pacer is not None else LocalPacer(clock), settings.post_lanes, limits, clock))
        # Without a signing secret (Socket Mode only) no HTTP route is mounted; the
        # random secret only makes sure nothing could ever verify against an empty one.
        self._signing_secret = signing_secret or secrets.token_hex(32)
        # process_before_response: the listeners only acknowledge and hand the question
        # to a task of this adapter, so they are quick, and that task exists (for
        # `drain` and `close`) by the time Slack has its answer.
        # A verified delivery no listener takes comes to `_on_error` (acknowledged there).
        self.app = AsyncApp(client=self.client, signing_secret=self._signing_secret,
                            name="prdigest", process_before_response=True,
                            logger=BOLT_LOG, raise_error_for_unhandled_request=True)
        self.app.error(self._on_error)
        self.app.command(SLASH_COMMAND)(self._on_command)
        self.app.event("app_mention")(self._on_event)
        self.app.event("message")(self._on_event)
        self.app.action(re.compile(rf"^{re.escape(ACTION_PREFIX)}"))(self._on_click)
        # Pasted PR links previewed, and the App Home tab: where the handler can say.
        previews, overviews = ((PullPreviews(handler), ChatOverviews(handler))
                               if isinstance(handler, CommandHandler) else (None, None))
        self.unfurls = SlackUnfurls(self.client, previews, deduper)
        self.home = SlackHome(self.client, overviews, default_lang=self.default_lang,
                              clock=clock)
        self.app.event("link_shared")(self._on_link_shared)
        self.app.event("app_home_opened")(self._on_home_opened)
        self._http = AsyncSlackRequestHandler(self.app)
        self._verifier = SignatureVerifier(self._signing_secret)
        self._socket: AsyncSocketModeHandler | None = None
        self._tasks = Background()

    @classmethod
    def from_config(
        cls, config: Config, handler: CommandAnswering, deduper: FirstSeen, **overrides: Any
    ) -> SlackAdapter | None:
        """The adapter the config and environment describe, or None when its secrets are
        not set. `overrides` replace fields of `[platforms.slack]` (tests: `api_url`,
        `socket_mode`) or constructor arguments; `outbound_only=True` builds one that
        only posts (`prdigest post`), which needs the bot token alone."""
        settings = settings_with(slack_settings(config), overrides)
        found = slack_secrets(settings)
        if missing_secrets(settings, found, outbound_only=bool(overrides.get("outbound_only"))):
            return None
        return cls(config, handler, deduper, found, settings, **overrides)

    def status(self) -> dict[str, Any]:
        """What /healthz shows: configured, mode, connection; never a secret value."""
        return {
            "platform": self.platform,
            "configured": True,
            "mode": "socket" if self.socket_mode else "http",
            "http_route": EVENTS_PATH if self._http_enabled else None,
            "socket_connected": self._socket_connected(),
            "answers_in_progress": len(self._tasks),
        }

    def _socket_connected(self) -> bool:
        if self._socket is None:
            return False
        session = self._socket.client.current_session
        return session is not None and not session.closed

    # --- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Open the Socket Mode connection when configured; idempotent."""
        if not self.socket_mode or self._socket is not None:
            return
        assert self._app_token is not None
        self._socket = AsyncSocketModeHandler(self.app, self._app_token)
        await self._socket.connect_async()  # type: ignore[no-untyped-call]

    def routes(self) -> list[BaseRoute]:
        """`POST /slack/events` for slash commands, events and button clicks alike."""
        if not self._http_enabled:
            return []
        return [Route(EVENTS_PATH, self._endpoint, methods=["POST"])]

    async def drain(self, timeout: float | None = None) -> None:
        """Wait for answers still being written (shutdown, tests)."""
        await self._tasks.drain(timeout)

    async def close(self) -> None:
        await self.drain(timeout=10)
        if self._socket is not None:
            await self._socket.close_async()  # type: ignore[no-untyped-call]
            self._socket = None
        await self.outbound.close()

    # --- outbound -------------------------------------------------------------------

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        """Post a weekly digest (one or more messages); returns their `ts`, raises
        `DeliveryError` when Slack did not take every part.

        Slack has no idempotency key, so the scheduler's delivery key goes into each
        part's message metadata instead: a delivery whose outcome is unknown can then
        be looked up in the channel (`complete_delivery`) rather than sent again.
        """
        return await self.outbound.post_parts(channel_id, render_digest_messages(digest),
                                      idempotency_key, found={})

    async def complete_delivery(self, channel_id: str, digest: Digest, *,
                                idempotency_key: str, since: datetime) -> list[str] | None:
        """A delivery left in doubt (posted since `since` with this key, or not): the
        `ts` of its parts, after posting any part missing from the channel; None when
        no part is there, or the channel's history cannot be read (the bot needs the
        `channels:history` / `groups:history` scope) - then the caller decides."""
        return await self.outbound.resume_parts(channel_id, render_digest_messages(digest),
                                                idempotency_key, since)

    async def complete_reply(self, channel_id: str, reply: Reply, *, idempotency_key: str,
                             since: datetime, thread: str | None = None) -> list[str] | None:
        """A notice left in doubt (posted since `since` with this key, or not), looked
        for in the channel or in the thread of `thread`: the `ts` of its parts, after
        posting any part missing; None when no part is there or the history cannot be
        read."""
        return await self.outbound.resume_parts(channel_id, render_reply_messages(reply),
                                                idempotency_key, since, thread_ts=thread,
                                                event=NOTICE_EVENT)

    async def send_reply(self, channel_id: str, reply: Reply, *, thread: str | None = None,
                         idempotency_key: str | None = None) -> list[str]:
        """Post a reply (a notice, an answer) to a channel, in the thread of the message
        `thread` when given; returns the messages' `ts`. Slack takes no idempotency key,
        so a notice's key goes into each part's metadata (`complete_reply` looks for it).
        A thread whose parent is gone raises `ParentGone` (Slack posted nothing)."""
        return await self.outbound.post_parts(channel_id, render_reply_messages(reply),
                                      idempotency_key, thread_ts=thread, event=NOTICE_EVENT)

    # --- inbound --------------------------------------------------------------------

    async def _endpoint(self, request: Request) -> Response:
        """Bolt checks the signature and dispatches. What Bolt cannot read or process is
        answered 401 when unsigned and 400 when signed - never 500 - with
        `X-Slack-No-Retry`, since sending the same bytes again cannot help."""
        body = await request.body()
        if not _signature_headers_readable(request):
            # Not even shaped like a signature: nothing below could accept it.
            logger.info("Slack request with malformed signature headers refused")
            return self._refusal(body, request, 401, "invalid request")
        if len(body) > MAX_BODY_BYTES:
            return self._refusal(body, request, 413, "payload too large")
        try:
            body.decode("utf-8")
            response = await self._http.handle(request)
        except Exception as exc:
            logger.warning("unreadable Slack request (%d bytes): %s", len(body),
                           type(exc).__name__)
            return self._refusal(body, request, 400, "bad request")
        if response.status_code >= 500 and "retry-after" not in response.headers:
            # Bolt answers 500 when its own middleware trips over a payload's shape; the
            # listeners here do nothing that could fail (a listener asking Slack to send
            # the delivery again says when: `_later`).
            logger.warning("Slack request Bolt could not process (%d bytes)", len(body))
            return self._refusal(body, request, 400, "bad request")
        return response

    def _refusal(self, body: bytes, request: Request, status: int, reason: str) -> Response:
        if not self._signed(body, request):
            status, reason = 401, "invalid request"
        return JSONResponse({"error": reason}, status_code=status,
                            headers={"X-Slack-No-Retry": "1"})

    def _signed(self, body: bytes, request: Request) -> bool:
        """The v0 signature check Bolt does, for bodies Bolt never gets to read."""
        if not _signature_headers_readable(request):
            return False
        try:
            return self._verifier.is_valid_request(body, dict(request.headers.items()))
        except UnicodeDecodeError:  # Slack signs UTF-8 text; these bytes are not
            return False

    async def _on_command(self, ack: AsyncAck, body: dict[str, Any]) -> BoltResponse | None:
        """Acknowledge the slash command at once (Slack waits 3 s); answer afterwards."""
        if await self._take(body) == "later":
            return self._later()
        await ack()
        return None

    async def _on_event(self, body: dict[str, Any]) -> BoltResponse | None:
        """Events are acknowledged by Bolt once this returns; questions get an answer."""
        admission = await self._take(body)
        return self._later() if admission == "later" else None

    def _later(self) -> BoltResponse:
        """"Send it again later": a delivery another process began answering and may
        have died on. Slack re-sends any answer but a 2xx (without `X-Slack-No-Retry`)."""
        later = self.inbox.retry_later
        return BoltResponse(status=later.status, body='{"error": "busy, retry later"}',
                            headers={"content-type": "application/json", **later.headers})

    async def _take(self, body: dict[str, Any]) -> Admission | None:
        """Admit the question in a payload and answer it in the background, unless it
        comes from a workspace or app other than the configured ones
        (`platforms.slack.team_ids` / `app_id`); None when it holds no question."""
        question = None if self._foreign(body) else read_question(body)
        if question is None:
            return None
        return await take(self.inbox, question, self._tasks, self._answer)

    async def _on_error(self, error: Exception, body: dict[str, Any]) -> BoltResponse | None:
        """Bolt's one error hook. A verified delivery the bot has no listener for
        (`reaction_added`, `tokens_revoked`, `app_rate_limited`...) is acknowledged with
        a 200 and logged once: Slack disables an app's subscriptions when over 5% of an
        hour's deliveries get anything else. Any other failure is logged in one line."""
        if isinstance(error, BoltUnhandledRequestError):
            kind, serious = unheard(body)
            if serious:
                logger.warning("Slack delivery %s: Slack is dropping this app's events for "
                               "the rest of the minute", kind)
            else:
                logger.info("Slack delivery %s acknowledged; prdigest does not act on it",
                            kind)
            return BoltResponse(status=200, body="")
        logger.warning("Slack request failed in Bolt: %s", type(error).__name__)
        return None

    async def _on_link_shared(self, body: dict[str, Any]) -> BoltResponse | None:
        """PR links pasted in a channel: previewed once per delivery, in the background
        (`adapters.slack.unfurls`)."""
        shared = link_shared(body)
        if shared is None or self._foreign(body):
            return None
        admission = await self.unfurls.once.take(shared.key, self._tasks,
                                                 lambda: self.unfurls.unfurl(shared))
        return self._later() if admission == "later" else None

    async def _on_home_opened(self, body: dict[str, Any]) -> None:
        """The Home tab opened: published in the background (`adapters.slack.home`)."""
        opened = home_opened(body)
        if opened is not None and not self._foreign(body):
            self._tasks.spawn(self.home.publish(opened))

    def _foreign(self, body: Mapping[str, Any]) -> bool:
        """Whether a verified payload comes from a workspace or app other than the
        configured ones (logged)."""
        settings = slack_settings(self.config)
        stranger = foreign_app(body, settings.team_ids, settings.app_id)
        if stranger is not None:
            logger.info("Slack payload from %s ignored: not the configured app", stranger)
        return stranger is not None

    async def _on_click(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """A click on one of our buttons: acknowledged at once (Slack waits 3 s). One
        that acts (`adapters.slack.clicks`) is answered afterwards, once, as the command
        it carries; a link button's click has nothing more to do. Slack never re-sends
        a click, so one held by another process is waited for, not refused."""
        await ack()
        if self._foreign({"team_id": team_of(body), "api_app_id": body.get("api_app_id")}):
            return
        question = question_from_click(body, ACTION_PREFIX)
        if question is not None:
            self._tasks.spawn(self._answer_click(question))

    async def _answer_click(self, question: Question) -> None:
        """A click, answered in its clicker's language."""
        await self._answer(await with_clicker_lang(self.client, question), admitted=False)

    async def _answer(self, question: Question, *, admitted: bool = True) -> None:
        """The shared inbox answers (once per delivery, never raising); this renders and
        delivers. The user is answered if Slack can be reached at all, and the log says
        why not (never a traceback in chat)."""
        await answer(self.inbox, question, self.bot_names, render_reply_messages,
                     replace=functools.partial(self._replace_clicked, question),
                     add=functools.partial(self._deliver, question), admitted=admitted)

    async def _replace_clicked(self, question: Question, message: SlackMessage) -> None:
        """`message` in place of the message clicked: on the click's response_url, or -
        that URL lapsed (30 minutes after the click) or used up - by `chat.update`."""
        try:
            await self.outbound.respond(click_response_url(question), message, replace=True)
        except DeliveryError as refused:
            ts = clicked_message(question)
            if ts is None:
                raise
            logger.info("Slack response_url refused (%s); the clicked message is updated",
                        refused)
            await self.outbound.update(question.channel_id, ts, message)

    async def _deliver(self, question: Question, messages: Sequence[SlackMessage]) -> None:
        """The answer on the command's or click's response_url; what that URL no longer
        takes (lapsed, used up) is posted by the bot - in the thread, or to the asker
        alone when only they were meant to see it."""
        url = response_url(question) or click_response_url(question)
        if not url or len(messages) > RESPONSE_URL_POSTS:
            await self.outbound.post_parts(question.channel_id, list(messages), None,
                                           thread_ts=question.thread)
            return
        sent = 0
        try:
            for message in messages:
                await self.outbound.respond(url, message)
                sent += 1
            return
        except DeliveryError as refused:
            logger.info("Slack response_url refused (%s); the bot posts the answer", refused)
        rest = list(messages[sent:])
        for message in (m for m in rest if m.response_type == "ephemeral"):
            if question.user_id is None:
                raise DeliveryError("an answer for one person had no one to go to")
            await self.outbound.post_ephemeral(question.channel_id, question.user_id,
                                               message, question.thread)
        public = [m for m in rest if m.response_type != "ephemeral"]
        if public:
            await self.outbound.post_parts(question.channel_id, public, None,
                                           thread_ts=question.thread)


def _signature_headers_readable(request: Request) -> bool:
    """Whether the timestamp and signature are shaped as Slack sends them; anything
    else (`abc`, `1.7e9`, 5,000 digits, non-ASCII) would make the SDK's check raise."""
    stamp = request.headers.get("x-slack-request-timestamp", "")
    signature = request.headers.get("x-slack-signature", "")
    return bool(_TIMESTAMP.fullmatch(stamp) and _SIGNATURE.fullmatch(signature))
