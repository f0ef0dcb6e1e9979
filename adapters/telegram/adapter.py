"""Telegram: python-telegram-bot's `Application` against the Bot API (or a fake of it).

Inbound, either a webhook route (`/telegram/webhook`, checked against the secret token
Telegram sends in `X-Telegram-Bot-Api-Secret-Token`) that hands the update to the
application's queue and answers at once, or long polling. Either way every update
passes the `Claims` first, keyed on the bot and `update_id`, so a re-delivered update
(Telegram retrying, another replica) is answered once. Outbound, HTML messages from
`adapters.telegram.render`, each in its turn of the bot's and the chat's pacing lanes;
a 429 holds them off for the `retry_after` Telegram asks for (`adapters.telegram.flood`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, ClassVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from telegram import (
    BotCommand,
    Update,
)
from telegram.error import BadRequest, ChatMigrated, Forbidden, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
)

from adapters.answering import admit
from adapters.base import DeliveryError
from adapters.delivering import NoArrivalLookup, stopped_post
from adapters.overrides import settings_with
from adapters.paced import Paced
from adapters.sending import Limits, Stopped, send_parts
from adapters.telegram import TEMPLATES
from adapters.telegram.admins import is_chat_admin
from adapters.telegram.clicks import click_handlers, question_from_click
from adapters.telegram.flood import PacedLimiter, outcome
from adapters.telegram.inbound import (
    ALLOWED_UPDATES,
    COMMANDS,
    message_handlers,
    question_from_update,
)
from adapters.telegram.payloads import chat_id, send_arguments
from adapters.telegram.redaction import LOGGERS_SEEING_THE_TOKEN, token_redaction
from adapters.telegram.render import (
    MAX_MESSAGE_CHARS,
    TelegramMessage,
    render_digest_messages,
    render_reply_messages,
)
from adapters.telegram.request import AiohttpRequest
from adapters.telegram.settings import TelegramSecrets, TelegramSettings, telegram_settings
from adapters.webhooks import Unreadable, json_object, retry_later, same_secret
from bot.chat.clicks import place_answer
from bot.chat.grammar import DEFAULT_BOT_NAMES
from bot.chat.inbound import CommandAnswering, FirstSeen, Inbox, Question, render_or_error
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config, secret
from bot.errors import ConfigError
from bot.i18n import translator
from bot.models import Digest, Lang, Reply
from bot.pacing import LocalPacer, Pacer

logger = logging.getLogger(__name__)

WEBHOOK_PATH = "/telegram/webhook"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# Telegram's own rule for webhook secret tokens (setWebhook refuses anything else).
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
# An update is a few kilobytes; anything far larger is not from Telegram.
MAX_UPDATE_BYTES = 1 << 20

PTBApplication = Application[Any, Any, Any, Any, Any, Any]


# A message is tried four times while Telegram answers 429, and neither a turn nor
# Telegram's `retry_after` is waited for longer than a minute.
TELEGRAM_LIMITS = Limits(attempts=4, max_wait=60.0, longest_hold=60.0)


class TelegramAdapter(NoArrivalLookup):
    """The Telegram side of prdigest: one bot, one `Application`, webhook or polling. A
    bot cannot read a chat's history, so whether a post in doubt arrived is unknown."""

    platform: ClassVar[str] = "telegram"
    max_message_chars: ClassVar[int] = MAX_MESSAGE_CHARS
    # The Bot API has no idempotency key: a re-send posts again.
    dedupe_window: ClassVar[timedelta | None] = None
    max_inbound_bytes: ClassVar[int] = MAX_UPDATE_BYTES
    refusal_headers: ClassVar[Mapping[str, str]] = {}
    # The language of `#7035` from a chat the config does not list, when the user's
    # Telegram language does not say.
    default_lang: ClassVar[Lang] = "en"

    def __init__(
        self,
        config: Config,
        handler: CommandAnswering,
        deduper: FirstSeen,
        credentials: TelegramSecrets,
        settings: TelegramSettings | None = None,
        *,
        webhook_url: str | None = None,
        file_url: str | None = None,
        outbound_only: bool = False,
        pacer: Pacer | None = None,
        clock: Clock = SYSTEM_CLOCK,
        limits: Limits = TELEGRAM_LIMITS,
        poll_timeout: float = 10.0,
        concurrent_updates: int = 16,
    ) -> None:
        """`settings`: the config's `[platforms.telegram]` (its Bot API, polling, the
        pace of messages, what a message in doubt becomes; default: `config`'s);
        `webhook_url`: where Telegram is asked to deliver (None: not registered);
        `outbound_only`: only posts (`prdigest post`), which needs the bot token alone."""
        settings = settings if settings is not None else telegram_settings(config)
        token, secret_token = credentials.token, credentials.secret_token
        api_url, polling = settings.api_url, settings.polling and not outbound_only
        send_timeout, in_doubt = settings.send_timeout_seconds, settings.in_doubt
        if not polling and not secret_token and not outbound_only:
            raise ConfigError("telegram: webhook mode needs a secret token")
        self._outbound_only = outbound_only
        self._config = config
        self._secret = secret_token
        self._polling = polling
        self._webhook_url = webhook_url
        self._poll_timeout = poll_timeout
        # A message whose answer has not come within `send_timeout` is in doubt; what
        # the schedule does with a post in doubt is `in_doubt` (hold or resend).
        self._resend_in_doubt = in_doubt == "resend"
        self._webhook_registered = False
        self._started = False
        self._handlers_added = False
        # Delivery keys the webhook admitted before acknowledging, until answered.
        self._admitted: set[str] = set()
        self._lock = asyncio.Lock()
        self._init_lock = asyncio.Lock()
        self._redaction = token_redaction(token)
        self._redaction.attach(LOGGERS_SEEING_THE_TOKEN)
        # Their sessions are closed by `close`, also after a start that failed half-way.
        self._requests = (AiohttpRequest(connection_pool_size=concurrent_updates,
                                         read_timeout=send_timeout),
                          AiohttpRequest(connection_pool_size=1))
        builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any] = (
            Application.builder()
            .token(token)
            .base_url(api_url)
            .base_file_url(file_url or _file_url(api_url))
            .rate_limiter(PacedLimiter(Paced(pacer if pacer is not None else LocalPacer(clock),
                                             settings.post_lanes, limits, clock)))
            .concurrent_updates(concurrent_updates)
            .request(self._requests[0])
            # Long polling holds its one connection for `poll_timeout` seconds.
            .get_updates_request(self._requests[1])
            .job_queue(None)
        )
        if not polling:
            builder = builder.updater(None)
        self.application: PTBApplication = builder.build()
        self.application.add_error_handler(self._on_error)
        self._inbox = Inbox(handler, deduper, default_lang=self.default_lang,
                            chat_admins=self._is_chat_admin, clock=clock)

    async def _is_chat_admin(self, question: Question) -> bool:
        """Whether the asker is the chat's creator or an administrator (Telegram's
        `getChatMember`, through the application's bot)."""
        return await is_chat_admin(self.application.bot, question)

    @classmethod
    def from_config(
        cls, config: Config, handler: CommandAnswering, deduper: FirstSeen, **overrides: Any
    ) -> TelegramAdapter | None:
        """The adapter the config describes, or None when its secrets are not in the
        environment (the bot token; in webhook mode also the secret token).
        `overrides` replace fields of `[platforms.telegram]` (`api_url` for a fake
        server) or constructor arguments;
        `outbound_only=True` builds one that only posts (`prdigest post`): the bot token
        is all it needs, and it neither polls nor registers a webhook."""
        section = settings_with(telegram_settings(config), overrides)
        token = secret(section.bot_token_env)
        outbound_only = bool(overrides.pop("outbound_only", False))
        polling = section.polling and not outbound_only
        secret_token = secret(section.secret_token_env)
        if token is None or (not polling and secret_token is None and not outbound_only):
            return None
        if secret_token is not None and not _SECRET_TOKEN.fullmatch(secret_token):
            raise ConfigError(f"{section.secret_token_env}: Telegram accepts 1-256 characters "
                              "of A-Z, a-z, 0-9, _ and - in a webhook secret token")
        public = (config.server.public_url or "").rstrip("/")
        # Telegram delivers webhooks to HTTPS addresses only.
        overrides.setdefault("webhook_url", f"{public}{WEBHOOK_PATH}"
                             if public.startswith("https://") and not outbound_only else None)
        return cls(config, handler, deduper, TelegramSecrets(token, secret_token), section,
                   outbound_only=outbound_only, **overrides)

    def status(self) -> dict[str, object]:
        """Health facts for /healthz; no secrets."""
        bot = self.application.bot
        return {
            "platform": "telegram",
            "configured": True,
            "mode": "polling" if self._polling else "webhook",
            "route": None if self._polling else WEBHOOK_PATH,
            "running": self._started and self.application.running,
            "bot": bot.username if self._handlers_added else None,
            "webhook_registered": self._webhook_registered,
        }

    # --- lifecycle -----------------------------------------------------------------------

    async def _initialize(self) -> None:
        """`getMe` once; the handlers need the bot's id and username."""
        async with self._init_lock:
            if self._handlers_added:
                return
            self._redaction.attach(LOGGERS_SEEING_THE_TOKEN)  # again, after a close()
            try:
                await self.application.initialize()
            except TelegramError as error:
                raise DeliveryError(
                    f"telegram: the Bot API refused getMe: {self._redact(error)}") from None
            bot = self.application.bot
            for handler in (*message_handlers(self._on_question, bot_id=bot.id,
                                              username=bot.username),
                            *click_handlers(self._on_question)):
                self.application.add_handler(handler)
            self._handlers_added = True

    async def start(self) -> None:
        """Start taking updates: the update queue, and polling or the webhook's
        registration; idempotent (and lock-free once started: every webhook asks)."""
        if self._started:
            return
        async with self._lock:
            if self._started:
                return
            await self._initialize()
            await self.application.start()
            self._started = True
            await self._announce_commands()
            if self._polling:
                updater = self.application.updater
                if updater is None:  # pragma: no cover - built with one in polling mode
                    raise RuntimeError("telegram: polling needs an updater")
                await updater.start_polling(
                    timeout=timedelta(seconds=self._poll_timeout),
                    allowed_updates=list(ALLOWED_UPDATES),
                    drop_pending_updates=False,
                    error_callback=self._on_polling_error,
                )
            elif self._webhook_url:
                await self._register_webhook(self._webhook_url)

    async def _register_webhook(self, url: str) -> None:
        try:
            await self.application.bot.set_webhook(
                url=url, secret_token=self._secret, allowed_updates=list(ALLOWED_UPDATES)
            )
        except TelegramError as error:
            logger.error("telegram: setWebhook for %s failed: %s", url, self._redact(error))
            return
        self._webhook_registered = True

    async def _announce_commands(self) -> None:
        """The command menu in both languages; a failure only costs the menu."""
        languages: tuple[tuple[Lang, str | None], ...] = (("en", None), ("zh", "zh"))
        for lang, code in languages:
            t = translator(lang, (TEMPLATES,))
            descriptions = {
                "risks": t("risk observations of a PR"), "summary": t("what a PR does"),
                "digest": t("this week's digest; also /digest last week or /digest 2026-W29"),
                "topics": t("the topics this chat follows and can follow"),
                "subscribe": t("follow a topic: merged PRs are announced here and lead the "
                               "digest"),
                "unsubscribe": t("stop following a topic"), "help": t("this help"),
                "pending": t("PRs open and waiting for review now, oldest first"),
                "follow": t("follow a repository: its weekly digest comes here"),
                "unfollow": t("stop following a repository"),
                "schedule": t("when the weekly digest comes, e.g. /schedule mon 9:00"),
                "timezone": t("the chat's time zone, e.g. /timezone Europe/Berlin"),
                "lang": t("the chat's language: /lang zh or /lang en"),
                "mute": t("mute merged-PR notices for a while, e.g. /mute 1d"),
                "unmute": t("turn merged-PR notices back on"),
                "settings": t("what this chat gets and when"),
            }
            commands = [BotCommand(name, descriptions[name][:256]) for name in COMMANDS]
            try:
                await self.application.bot.set_my_commands(commands, language_code=code)
            except TelegramError as error:
                logger.warning("telegram: setMyCommands failed: %s", self._redact(error))
                return

    async def close(self) -> None:
        async with self._lock:
            if self._started:
                updater = self.application.updater
                if updater is not None and updater.running:
                    await updater.stop()
                if self.application.running:
                    await self.application.stop()
                self._started = False
            if self._handlers_added:
                await self.application.shutdown()
                self._handlers_added = False
                self.application.handlers.clear()
            for request in self._requests:  # a getMe that failed left them open
                await request.shutdown()
            self._redaction.detach(LOGGERS_SEEING_THE_TOKEN)

    # --- inbound ---------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """The webhook route; none in polling mode or for an adapter that only posts."""
        if self._polling or self._outbound_only:
            return []
        return [Route(WEBHOOK_PATH, self.webhook, methods=["POST"])]

    async def webhook(self, request: Request) -> Response:
        """One update from Telegram. A wrong or missing secret token is refused before
        anything else is read; the answer comes once the update is queued."""
        if not same_secret(request.headers.get(SECRET_HEADER, ""), self._secret):
            return JSONResponse({"ok": False, "error": "unauthorized"}, status_code=401)
        try:
            data = await json_object(request, MAX_UPDATE_BYTES)
        except Unreadable as bad:
            error = "not an update" if bad.problem == "not an object" else bad.problem
            return JSONResponse({"ok": False, "error": error}, status_code=bad.status)
        update_id = data.get("update_id")
        if not isinstance(update_id, int) or isinstance(update_id, bool):
            return JSONResponse({"ok": False, "error": "not an update"}, status_code=400)
        try:
            await self.start()
        except DeliveryError as error:
            # The Bot API is unreachable: Telegram re-delivers after a 5xx, so nothing is lost.
            logger.warning("telegram: cannot take update %s: %s", update_id, error)
            return JSONResponse({"ok": False, "error": "unavailable"}, status_code=503)
        try:
            update = Update.de_json(data, self.application.bot)
            question = self._question(update)
        except Exception:  # a malformed field deep inside (an entity without an offset):
            # not an update we can read
            logger.info("telegram: unreadable update %s", update_id)
            return JSONResponse({"ok": False, "error": "not an update"}, status_code=400)
        if question is not None and question.delivery_key is not None:
            admission = await admit(self._inbox, question)
            if admission == "later":
                return retry_later({"ok": False, "error": "busy, retry later"})
            if admission == "repeat":
                return JSONResponse({"ok": True})
            self._admitted.add(question.delivery_key)
        await self.application.update_queue.put(update)
        return JSONResponse({"ok": True})

    def _question(self, update: Update) -> Question | None:
        """The question an update asks the bot, when one of its handlers takes it."""
        bot_id = self.application.bot.id
        question = (question_from_update(update, bot_id=bot_id)
                    or question_from_click(update, bot_id=bot_id))
        if question is None or not any(handler.check_update(update)
                                       for group in self.application.handlers.values()
                                       for handler in group):
            return None
        return question

    async def _on_question(self, update: Update, context: Any) -> None:
        """A message for the bot, or a click on a button that acts: the shared inbox
        answers (once per update, never raising); this renders and sends - quoting the
        question in a group, or in place of the message clicked
        (`bot.chat.clicks.place_answer`) with the click's query answered once, as early
        as this process knows the click is its to answer (Telegram stops the spinner)."""
        bot = self.application.bot
        question = (question_from_update(update, bot_id=bot.id)
                    or question_from_click(update, bot_id=bot.id))
        if question is None:
            return
        names = (bot.username, *DEFAULT_BOT_NAMES) if bot.username else DEFAULT_BOT_NAMES
        query, answered = update.callback_query, [False]

        async def answer_query() -> None:
            if query is None or answered[0]:
                return
            answered[0] = True
            try:
                await bot.answer_callback_query(query.id)
            except TelegramError as error:  # too old to answer: the reply still goes
                logger.info("telegram: answerCallbackQuery failed: %s", self._redact(error))

        async def send(reply: Reply) -> None:
            await answer_query()
            await place_answer(question.action, reply,
                               render_or_error(render_reply_messages, reply, "telegram"),
                               replace=functools.partial(self._edit, question),
                               add=functools.partial(self._reply, question),
                               refused=(BadRequest, Forbidden))

        admitted = question.delivery_key in self._admitted
        self._admitted.discard(question.delivery_key or "")
        try:
            if admitted:  # the webhook admitted it: the spinner can stop before the answer
                await answer_query()
            await self._inbox.answer(question, names, send=send, admitted=admitted)
        except (TelegramError, Stopped) as error:
            logger.warning("telegram: answering update %s failed: %s", question.delivery_key,
                           self._redact(error))

    async def _reply(self, question: Question, messages: Sequence[TelegramMessage]) -> None:
        """Messages in answer to the question, replying to it, in its forum topic."""
        await self._send(chat_id(question.channel_id), messages,
                         reply_to=None if question.reply_to is None else int(question.reply_to),
                         thread_id=None if question.thread is None else int(question.thread))

    async def _edit(self, question: Question, message: TelegramMessage) -> None:
        """The message clicked edited into `message`; Telegram's "message is not
        modified" (the same answer again) is done, any other refusal raised."""
        try:
            await self.application.bot.edit_message_text(
                message_id=int(question.reply_to or 0),
                **send_arguments(chat_id(question.channel_id), message))
        except BadRequest as error:
            if "not modified" not in error.message.lower():
                raise

    async def _on_error(self, update: object, context: Any) -> None:
        logger.error("telegram: error while handling an update: %s",
                     self._redact(context.error))

    def _on_polling_error(self, error: TelegramError) -> None:
        logger.warning("telegram: polling failed, retrying: %s", self._redact(error))

    # --- outbound ---------------------------------------------------------------------

    async def send_reply(self, channel_id: str, reply: Reply, *, thread: str | None = None,
                         idempotency_key: str | None = None) -> list[str]:
        """Post a reply to a chat, as a reply to the message `thread` when given;
        returns the message ids. Telegram itself posts it unattached when that message
        is gone (`allow_sending_without_reply`), so this never raises `ParentGone`.
        The Bot API takes no idempotency key."""
        reply_to = int(thread) if thread is not None and thread.isdigit() else None
        return await self._deliver(channel_id, render_reply_messages(reply), reply_to=reply_to)

    async def post_digest(self, channel_id: str, digest: Digest, *,
                          idempotency_key: str | None = None) -> list[str]:
        """Post a weekly digest, split into as many messages as it needs; raises
        `DeliveryError` unless Telegram accepted every one. Telegram takes no
        idempotency key, so the key is not sent."""
        return await self._deliver(channel_id, render_digest_messages(digest))

    async def _deliver(self, channel_id: str, messages: list[TelegramMessage], *,
                       moved: bool = False, reply_to: int | None = None) -> list[str]:
        await self._initialize()
        try:
            return await self._send(chat_id(channel_id), messages,
                                    reply_to=None if moved else reply_to)
        except ChatMigrated as migration:
            if moved:
                raise DeliveryError(f"telegram: chat {channel_id} moved twice") from None
            # A group upgraded to a supergroup has a new id; deliver there, and say so.
            logger.warning("telegram: chat %s moved to %s; update the config",
                           channel_id, migration.new_chat_id)
            return await self._deliver(str(migration.new_chat_id), messages, moved=True)
        except Stopped as stop:
            raise stopped_post(stop, "telegram", channel_id, method="sendMessage",
                               resend=self._resend_in_doubt, quote=self._redact) from None

    async def _send(self, chat: int | str, messages: Sequence[TelegramMessage], *,
                    reply_to: int | None = None, thread_id: int | None = None) -> list[str]:
        """Send messages in order; the first one answers `reply_to` when given. A send
        that stopped part-way raises `Stopped` (a chat that moved, before any message
        went, its `ChatMigrated`)."""
        async def one(index: int, message: TelegramMessage) -> str:
            arguments = send_arguments(chat, message,
                                       reply_to=reply_to if index == 0 else None,
                                       thread_id=thread_id)
            posted = await self.application.bot.send_message(**arguments)
            return str(posted.message_id)

        return await send_parts(messages, one, failure=TelegramError, outcome=outcome,
                                stopped=lambda stop: stop.error if isinstance(
                                    stop.error, ChatMigrated) and not stop.sent else stop)

    def _redact(self, error: BaseException | None) -> str:
        return self._redaction.clean(str(error) if error is not None else "unknown error")


def _file_url(api_url: str) -> str:
    """`https://api.telegram.org/bot` -> `https://api.telegram.org/file/bot`."""
    base = api_url.rstrip("/")
    if base.endswith("/bot"):
        return f"{base[: -len('/bot')]}/file/bot"
    return f"{base}/file/bot"
