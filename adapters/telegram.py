"""Telegram: python-telegram-bot's `Application` against the Bot API (or a fake of it).

Inbound, either a webhook route (`/telegram/webhook`, checked against the secret token
Telegram sends in `X-Telegram-Bot-Api-Secret-Token`) that hands the update to the
application's queue and answers at once, or long polling. Either way every update
passes the `Deduper` first, keyed on the bot and `update_id`, so a re-delivered update
(Telegram retrying, another replica) is answered once. Outbound, HTML messages from
`bot.render.telegram`; a 429 is retried after the `retry_after` Telegram asks for.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import itertools
import json
import logging
import re
import warnings
from collections.abc import Callable, Coroutine, Sequence
from datetime import timedelta
from typing import Any, ClassVar, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from telegram import (
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    ReplyParameters,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import ChatMigrated, RetryAfter, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    BaseRateLimiter,
    TypeHandler,
)
from telegram.warnings import PTBDeprecationWarning

from adapters.base import DeliveryError
from adapters.telegram_inbound import (
    ALLOWED_UPDATES,
    COMMANDS,
    Inbound,
    inbound_from_update,
    language_of,
    message_handlers,
    to_command,
)
from adapters.telegram_request import AiohttpRequest
from bot.config import ChannelConfig, Config, secret
from bot.errors import ConfigError
from bot.i18n import translator
from bot.models import Command, Digest, Lang, Reply
from bot.render.telegram import (
    MAX_MESSAGE_CHARS,
    LinkButton,
    TelegramMessage,
    render_digest_messages,
    render_reply_messages,
)
from bot.store.claims import Deduper

logger = logging.getLogger(__name__)

WEBHOOK_PATH = "/telegram/webhook"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# Telegram's own rule for webhook secret tokens (setWebhook refuses anything else).
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
# An update is a few kilobytes; anything far larger is not from Telegram.
MAX_UPDATE_BYTES = 1 << 20
DEFAULT_API_URL = "https://api.telegram.org/bot"

PTBApplication = Application[Any, Any, Any, Any, Any, Any]
# Links to PRs would each unfurl into a preview card; the digest is the content.
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


class ReplyHandler(Protocol):
    """`bot.chat.handler.CommandHandler`: a command in, a reply out, never raising."""

    async def handle(
        self, command: Command, *, channel: ChannelConfig | None, user: str | None
    ) -> Reply: ...


def retry_after_seconds(error: RetryAfter) -> float:
    """The wait Telegram asked for, whether PTB gives it as seconds or (with
    `PTB_TIMEDELTA=true`, the future default) as a `timedelta`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value: object = error.retry_after
    if isinstance(value, timedelta):
        return value.total_seconds()
    return float(value)  # type: ignore[arg-type]


class RetryAfterLimiter(BaseRateLimiter[None]):
    """Retries a request Telegram refused with 429 after the `retry_after` it named.

    PTB's `AIORateLimiter` does this too but needs `aiolimiter`, which is not a
    dependency; prdigest sends a few messages a week per chat, so reacting to flood
    control is enough and nothing is throttled up front. A wait longer than
    `max_wait` seconds is not waited for: the error goes up to the caller.
    """

    def __init__(self, *, max_retries: int = 3, max_wait: float = 60.0) -> None:
        self.max_retries = max_retries
        self.max_wait = max_wait

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | dict[str, Any] | list[dict[str, Any]]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: None,
    ) -> bool | dict[str, Any] | list[dict[str, Any]]:
        for attempt in itertools.count(1):
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as error:
                wait = retry_after_seconds(error)
                if attempt > self.max_retries or wait > self.max_wait:
                    raise
                logger.warning("telegram %s: flood control, retrying in %.1f s (attempt %d)",
                               endpoint, wait, attempt)
                await asyncio.sleep(wait + 0.1)
        raise AssertionError("unreachable")  # pragma: no cover


# Loggers that may write a Bot API URL (which holds the token) or an error quoting it.
_LOGGERS_SEEING_THE_TOKEN = (
    "httpx", "telegram", "telegram.Bot", "telegram.ext", "telegram.ext.ExtBot",
    "telegram.ext.Updater", "telegram.ext.Application", "telegram.request.BaseRequest",
    "telegram.request.HTTPXRequest", "aiohttp", "aiohttp.client",
)


class _RedactToken(logging.Filter):
    """Replaces the bot token in log records: httpx logs every request URL, PTB logs its
    base URL and `InvalidToken` quotes the token."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self._token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self._token in message:
            record.msg = message.replace(self._token, "<token>")
            record.args = ()
        if record.exc_info and not record.exc_text:
            # Formatters reuse `exc_text`, so the traceback is written redacted.
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = text.replace(self._token, "<token>")
        return True


class TelegramAdapter:
    """The Telegram side of prdigest: one bot, one `Application`, webhook or polling."""

    platform: ClassVar[str] = "telegram"
    max_message_chars: ClassVar[int] = MAX_MESSAGE_CHARS

    def __init__(
        self,
        config: Config,
        handler: ReplyHandler,
        deduper: Deduper,
        *,
        token: str,
        secret_token: str | None,
        api_url: str = DEFAULT_API_URL,
        file_url: str | None = None,
        polling: bool = False,
        webhook_url: str | None = None,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        poll_timeout: float = 10.0,
        concurrent_updates: int = 16,
    ) -> None:
        if not polling and not secret_token:
            raise ConfigError("telegram: webhook mode needs a secret token")
        self._config = config
        self._handler = handler
        self._deduper = deduper
        self._token = token
        self._secret = secret_token
        self._polling = polling
        self._webhook_url = webhook_url
        self._poll_timeout = poll_timeout
        self._webhook_registered = False
        self._started = False
        self._handlers_added = False
        self._lock = asyncio.Lock()
        self._init_lock = asyncio.Lock()
        self._redaction = _RedactToken(token)
        for name in _LOGGERS_SEEING_THE_TOKEN:
            logging.getLogger(name).addFilter(self._redaction)
        builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any] = (
            Application.builder()
            .token(token)
            .base_url(api_url)
            .base_file_url(file_url or _file_url(api_url))
            .rate_limiter(RetryAfterLimiter(max_retries=max_retries, max_wait=max_retry_wait))
            .concurrent_updates(concurrent_updates)
            .request(AiohttpRequest(connection_pool_size=concurrent_updates))
            # Long polling holds its one connection for `poll_timeout` seconds.
            .get_updates_request(AiohttpRequest(connection_pool_size=1))
            .job_queue(None)
        )
        if not polling:
            builder = builder.updater(None)
        self.application: PTBApplication = builder.build()
        self.application.add_error_handler(self._on_error)

    @classmethod
    def from_config(
        cls, config: Config, handler: ReplyHandler, deduper: Deduper, **overrides: Any
    ) -> TelegramAdapter | None:
        """The adapter the config describes, or None when its secrets are not in the
        environment (the bot token; in webhook mode also the secret token).
        `overrides` replace constructor arguments, e.g. `api_url` for a fake server."""
        section = config.platforms.telegram
        token = secret(section.bot_token_env)
        polling = bool(overrides.pop("polling", section.polling))
        secret_token = secret(section.secret_token_env)
        if token is None or (not polling and secret_token is None):
            return None
        if secret_token is not None and not _SECRET_TOKEN.fullmatch(secret_token):
            raise ConfigError(f"{section.secret_token_env}: Telegram accepts 1-256 characters "
                              "of A-Z, a-z, 0-9, _ and - in a webhook secret token")
        public = config.server.public_url.rstrip("/")
        options: dict[str, Any] = {
            "api_url": section.api_url,
            # Telegram delivers webhooks to HTTPS addresses only.
            "webhook_url": f"{public}{WEBHOOK_PATH}" if public.startswith("https://") else None,
        }
        options.update(overrides)
        return cls(config, handler, deduper, token=token, secret_token=secret_token,
                   polling=polling, **options)

    @staticmethod
    def configured_status(config: Config) -> dict[str, object]:
        """What /healthz says about Telegram when no adapter could be built: which
        environment variables are missing (their names, never values)."""
        section = config.platforms.telegram
        needed = [section.bot_token_env] + ([] if section.polling else [section.secret_token_env])
        return {"platform": "telegram", "configured": False,
                "missing": [name for name in needed if secret(name) is None]}

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
            for name in _LOGGERS_SEEING_THE_TOKEN:  # again, after a close()
                logging.getLogger(name).addFilter(self._redaction)
            try:
                await self.application.initialize()
            except TelegramError as error:
                raise DeliveryError(
                    f"telegram: the Bot API refused getMe: {self._redact(error)}") from None
            bot = self.application.bot
            self.application.add_handler(TypeHandler(Update, self._drop_seen_updates), group=-1)
            for handler in message_handlers(self._on_message, bot_id=bot.id,
                                            username=bot.username):
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
            t = translator(lang)
            descriptions = {
                "risks": t("risk observations of a PR"), "summary": t("what a PR does"),
                "digest": t("this week's digest; also /digest last week or /digest 2026-W29"),
                "topics": t("the topics this chat follows and can follow"),
                "subscribe": t("follow a topic: merged PRs are announced here and lead the "
                               "digest"),
                "unsubscribe": t("stop following a topic"), "help": t("this help"),
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
            for name in _LOGGERS_SEEING_THE_TOKEN:
                logging.getLogger(name).removeFilter(self._redaction)

    # --- inbound ---------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """The webhook route; none in polling mode."""
        if self._polling:
            return []
        return [Route(WEBHOOK_PATH, self.webhook, methods=["POST"])]

    async def webhook(self, request: Request) -> Response:
        """One update from Telegram. A wrong or missing secret token is refused before
        anything else is read; the answer comes once the update is queued."""
        given = request.headers.get(SECRET_HEADER, "").encode()
        expected = (self._secret or "").encode()
        if not expected or not hmac.compare_digest(given, expected):
            return JSONResponse({"ok": False, "error": "unauthorized"}, status_code=401)
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_UPDATE_BYTES:
            return JSONResponse({"ok": False, "error": "too large"}, status_code=413)
        body = await request.body()
        if len(body) > MAX_UPDATE_BYTES:
            return JSONResponse({"ok": False, "error": "too large"}, status_code=413)
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to read
            return JSONResponse({"ok": False, "error": "not JSON"}, status_code=400)
        update_id = data.get("update_id") if isinstance(data, dict) else None
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
        except Exception:  # a malformed field deep inside: not an update we can read
            logger.info("telegram: unreadable update %s", update_id)
            return JSONResponse({"ok": False, "error": "not an update"}, status_code=400)
        await self.application.update_queue.put(update)
        return JSONResponse({"ok": True})

    async def _drop_seen_updates(self, update: Update, context: Any) -> None:
        """First in line for every update: a delivery seen before stops here. When Redis
        cannot be asked, the update is answered (a rare double beats silence)."""
        key = f"{self.application.bot.id}:{update.update_id}"
        try:
            first = await self._deduper.first(self.platform, key)
        except Exception as error:
            logger.warning("telegram: dedupe unavailable for update %s: %s",
                           update.update_id, error)
            return
        if not first:
            logger.info("telegram: update %s already handled", update.update_id)
            raise ApplicationHandlerStop

    async def _on_message(self, update: Update, context: Any) -> None:
        inbound = inbound_from_update(update)
        if inbound is None:
            return
        channel = self._config.channel(f"{self.platform}:{inbound.chat_id}")
        preferred: Lang = (channel.lang if channel is not None
                           else language_of(inbound.language_code) or "en")
        command = to_command(inbound, bot_username=self.application.bot.username,
                             preferred=preferred)
        reply = await self._answer(command, channel, inbound)
        try:
            messages = render_reply_messages(reply)
        except Exception:
            logger.exception("telegram: rendering a %s reply failed", reply.kind)
            messages = render_reply_messages(
                Reply(kind="error", lang=command.lang, error="internal-error"))
        try:
            await self._send(inbound.chat_id, messages,
                             reply_to=inbound.message_id if inbound.in_group else None,
                             thread_id=inbound.thread_id)
        except TelegramError as error:
            logger.warning("telegram: answering update %s failed: %s", inbound.update_id,
                           self._redact(error))

    async def _answer(self, command: Command, channel: ChannelConfig | None,
                      inbound: Inbound) -> Reply:
        try:
            return await self._handler.handle(command, channel=channel, user=inbound.user_id)
        except Exception:
            logger.exception("telegram: the handler failed on update %s", inbound.update_id)
            return Reply(kind="error", lang=command.lang, error="internal-error")

    async def _on_error(self, update: object, context: Any) -> None:
        logger.error("telegram: error while handling an update: %s",
                     self._redact(context.error))

    def _on_polling_error(self, error: TelegramError) -> None:
        logger.warning("telegram: polling failed, retrying: %s", self._redact(error))

    # --- outbound ---------------------------------------------------------------------

    async def send_reply(self, channel_id: str, reply: Reply) -> list[str]:
        """Post a reply to a chat; returns the message ids."""
        return await self._deliver(channel_id, render_reply_messages(reply))

    async def post_digest(self, channel_id: str, digest: Digest) -> list[str]:
        """Post a weekly digest, split into as many messages as it needs; raises
        `DeliveryError` unless Telegram accepted every one."""
        return await self._deliver(channel_id, render_digest_messages(digest))

    async def _deliver(self, channel_id: str, messages: list[TelegramMessage], *,
                       moved: bool = False) -> list[str]:
        await self._initialize()
        chat: int | str = int(channel_id) if re.fullmatch(r"-?\d+", channel_id) else channel_id
        try:
            return await self._send(chat, messages)
        except ChatMigrated as migration:
            if moved:
                raise DeliveryError(f"telegram: chat {channel_id} moved twice") from None
            # A group upgraded to a supergroup has a new id; deliver there, and say so.
            logger.warning("telegram: chat %s moved to %s; update the config",
                           channel_id, migration.new_chat_id)
            return await self._deliver(str(migration.new_chat_id), messages, moved=True)
        except _PartialDelivery as partial:
            raise DeliveryError(
                f"telegram: {len(partial.sent)} of {len(messages)} messages posted to "
                f"{channel_id}; sendMessage failed: {self._redact(partial.error)}"
            ) from None

    async def _send(self, chat: int | str, messages: Sequence[TelegramMessage], *,
                    reply_to: int | None = None, thread_id: int | None = None) -> list[str]:
        """Send messages in order; the first one answers `reply_to` when given."""
        sent: list[str] = []
        for index, message in enumerate(messages):
            reply = (ReplyParameters(message_id=reply_to, allow_sending_without_reply=True)
                     if reply_to is not None and index == 0 else None)
            try:
                posted = await self.application.bot.send_message(
                    chat_id=chat,
                    text=message.text,
                    parse_mode=ParseMode.HTML,
                    link_preview_options=_NO_PREVIEW,
                    reply_markup=_keyboard(message.buttons),
                    reply_parameters=reply,
                    message_thread_id=thread_id,
                )
            except ChatMigrated:
                if sent:
                    raise _PartialDelivery(sent, TelegramError("chat migrated")) from None
                raise
            except TelegramError as error:
                raise _PartialDelivery(sent, error) from None
            sent.append(str(posted.message_id))
        return sent

    def _redact(self, error: BaseException | None) -> str:
        text = str(error) if error is not None else "unknown error"
        return text.replace(self._token, "<token>")


class _PartialDelivery(TelegramError):
    """Sending stopped at a message; `sent` holds the ids of those before it."""

    def __init__(self, sent: list[str], error: TelegramError) -> None:
        super().__init__(error.message)
        self.sent = sent
        self.error = error


@functools.lru_cache(maxsize=1024)
def _keyboard(rows: tuple[tuple[LinkButton, ...], ...]) -> InlineKeyboardMarkup | None:
    """The buttons under a message; PTB's objects are frozen, so one serves every send."""
    if not rows:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(button.label, url=button.url) for button in row] for row in rows]
    )


def _file_url(api_url: str) -> str:
    """`https://api.telegram.org/bot` -> `https://api.telegram.org/file/bot`."""
    base = api_url.rstrip("/")
    if base.endswith("/bot"):
        return f"{base[: -len('/bot')]}/file/bot"
    return f"{base}/file/bot"
