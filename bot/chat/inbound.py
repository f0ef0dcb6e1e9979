"""One inbound pipeline for every chat platform: a neutral `Question` in, a `Reply` out.

Each adapter turns its payload into a `Question` and the `Inbox` does the rest, the same
way for all of them: drop a delivery seen before, ask the handler which channel the chat
is (the config in force: the file's channels and the chats set up from chat), choose
the language, parse with the shared grammar, ask the handler, and never raise - a
failure becomes the `internal-error` reply, logged once, with no traceback in chat.
The adapter then renders the reply and sends it. Whether the asker is one of the chat's
admins is asked of the platform (`ChatAdmins`) only when a change to the chat's
settings needs it.

A delivery the platform re-sends when it is not acknowledged (a webhook) is admitted
before it is acknowledged (`Inbox.admit`): one that another process began answering,
and that process may have died, is answered "send it again later"
(`RETRY_LATER`), never acknowledged as a repeat - or the platform would stop re-sending
a question nobody answers. One nobody re-sends (long polling, a long
connection) waits here instead (`LATER_WAITS`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from bot.chat.clicks import clicker_lang, command_of_click
from bot.chat.grammar import DEFAULT_BOT_NAMES, detect_lang, parse_command
from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import ChannelConfig
from bot.logs import delivery
from bot.models import Admission, Command, Lang, Reply

log = logging.getLogger(__name__)

_Message = TypeVar("_Message")

# The language of a question from a chat the config does not list, when neither the
# text nor the platform tells: the config's own default for a channel's `lang`.
UNLISTED_CHAT_LANG: Lang = "zh"


@dataclass(frozen=True)
class RetryLater:
    """What a webhook answers a delivery admitted "later": a status every platform
    re-sends after (Slack, Telegram, Feishu; GitHub's "redeliver"), and a `Retry-After`
    of about how long a dead process's alive mark outlives it
    (`bot.store.claims.ALIVE_SECONDS`), after which its claim is taken over."""

    status: int = 503
    seconds: int = 10

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.seconds)}


RETRY_LATER = RetryLater()
LATER_WAITS: tuple[float, ...] = (2.5, 5.0, 5.0, 5.0, 5.0)
"""Seconds between admissions of a delivery nobody re-sends while another process holds
it: together well past the life of a dead process's alive mark."""


@dataclass(frozen=True, kw_only=True)
class Question:
    """A question asked in chat, before the grammar reads it.

    `delivery_key` identifies one delivery across the platform's re-sends (None for
    payloads never re-sent). Where in the chat to answer, as the platform names it:
    `thread` (a Slack thread's `ts`, a Telegram topic) and `reply_to` (the message the
    answer quotes: Feishu, Telegram groups). `user_lang` is the language the platform says
    the user speaks, when it says one. `fixed_verb` marks text that starts with a
    platform command whose verb is English whatever the user speaks (Telegram's
    `/risks 7035`): only its arguments tell the language. `direct`: a one-to-one chat
    with the bot, whose user is its admin. `action`: for a button click, the data of
    the button clicked (`bot.actions`; `text` is then empty), read instead of the text
    and answered in the clicker's language. `raw` keeps the payload.
    """

    platform: str
    channel_id: str
    user_id: str | None
    text: str
    delivery_key: str | None = None
    thread: str | None = None
    reply_to: str | None = None
    user_lang: Lang | None = None
    fixed_verb: bool = False
    direct: bool = False
    action: str | None = None
    raw: Any = field(default=None, repr=False, compare=False)

    @property
    def channel_key(self) -> str:
        """How the config names this chat: `slack:C0123`."""
        return f"{self.platform}:{self.channel_id}"


class FirstSeen(Protocol):
    """Dedupe across replicas (`bot.store.claims.Claims`): `first` begins answering a
    delivery (or says why not), `answered` records it done once sent, `unanswered` lets
    a retry answer."""

    async def first(self, platform: str, key: str) -> Admission: ...

    async def answered(self, platform: str, key: str) -> None: ...

    async def unanswered(self, platform: str, key: str) -> None: ...


async def first_seen(deduper: FirstSeen, platform: str, key: str | None) -> Admission:
    """Whether to handle the delivery `key`: "answer" (this process now holds it;
    always, without a key), "repeat", or "later" (ask the platform to send it again).
    When the dedupe store cannot be asked it is handled: a rare double beats silence."""
    if key is None:
        return "answer"
    try:
        return await deduper.first(platform, key)
    except Exception as exc:
        log.warning("%s: dedupe unavailable (%s); handling %s anyway", platform,
                    type(exc).__name__, key)
        return "answer"


async def record_outcome(deduper: FirstSeen, platform: str, key: str | None, *,
                         done: bool) -> None:
    """Tell the dedupe store how the delivery `key` ended: handled (`done`), or let go
    so a retry may try again (`Claims` keeps an outcome it cannot write yet and writes
    it once Redis is back); never raises."""
    if key is None:
        return
    try:
        if done:
            await deduper.answered(platform, key)
        else:
            await deduper.unanswered(platform, key)
    except Exception as exc:
        log.warning("%s: dedupe unavailable (%s) recording %s", platform,
                    type(exc).__name__, key)


SendReply = Callable[[Reply], Awaitable[object]]
ChatAdmins = Callable[["Question"], Awaitable[bool]]
"""A platform's answer to "is the asker one of this chat's admins?" (its API)."""


@dataclass(frozen=True)
class Asker:
    """Who asked, and in which chat (`slack:C0123`): what a change to the chat's own
    settings is checked against. `chat_admin` asks the platform whether the user is one
    of the chat's admins (None where it cannot tell); `direct`: a one-to-one chat."""

    chat: str
    user: str | None = None
    direct: bool = False
    chat_admin: Callable[[], Awaitable[bool]] | None = None

    @property
    def platform(self) -> str:
        """The platform the chat is on (`slack` of `slack:C0123`)."""
        return self.chat.partition(":")[0]


class CommandAnswering(Protocol):
    """A command in, a reply out (`bot.chat.handler.CommandHandler`); and which channel
    a chat is, in the config in force."""

    async def handle(self, command: Command, *, channel: ChannelConfig | None,
                     user: str | None = None, asker: Asker | None = None) -> Reply: ...

    async def chat_channel(self, chat: str) -> ChannelConfig | None:
        """The channel `chat` (`slack:C0123`) is now, or None for a chat not set up."""
        ...


def preferred_lang(channel: ChannelConfig | None, question: Question,
                   platform_default: Lang) -> Lang:
    """The one language rule: the channel's `lang`; for a chat the config does not list,
    the user's language as the platform reports it, else the platform's declared default."""
    if channel is not None:
        return channel.lang
    return question.user_lang or platform_default


def read_command(question: Question, *, preferred: Lang,
                 bot_names: Iterable[str] = DEFAULT_BOT_NAMES) -> Command:
    """The grammar's reading of the question. Free text speaks for itself (the grammar
    detects its language, `preferred` decides text without letters); a fixed English
    verb says nothing, so such a command is answered in `preferred` unless its
    arguments are Chinese."""
    lang: Lang | None = None
    if question.fixed_verb:
        arguments = question.text.strip().partition(" ")[2]
        lang = "zh" if detect_lang(arguments) == "zh" else preferred
    return parse_command(question.text, lang=lang, default_lang=preferred,
                         bot_names=tuple(bot_names))


class Inbox:
    """Questions of one platform to replies; shared by every adapter. `chat_admins`:
    the platform's way of telling a chat's admins (None: it cannot tell); `clock`: what
    the waits for a delivery held elsewhere (`later_waits`) pass on."""

    retry_later: ClassVar[RetryLater] = RETRY_LATER

    def __init__(self, handler: CommandAnswering, deduper: FirstSeen, *,
                 default_lang: Lang = UNLISTED_CHAT_LANG,
                 later_waits: tuple[float, ...] = LATER_WAITS,
                 chat_admins: ChatAdmins | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        self.handler = handler
        self.clock = clock
        self.deduper = deduper
        self.default_lang = default_lang
        self.later_waits = later_waits
        self.chat_admins = chat_admins

    async def admit(self, question: Question) -> Admission:
        """Whether to answer a delivery: "answer" (this process now holds it: pass
        `admitted=True` to `answer`), "repeat", or "later" (ask the platform to send it
        again). When the dedupe store cannot be asked the question is answered: a rare
        double answer beats silence."""
        return await first_seen(self.deduper, question.platform, question.delivery_key)

    async def answer(self, question: Question,
                     bot_names: Iterable[str] = DEFAULT_BOT_NAMES, *,
                     send: SendReply | None = None, admitted: bool = False) -> Reply | None:
        """The reply to `question`, or None when it is a repeat. With `send`, the reply
        is sent here and the delivery counts as answered only once `send` returned: if
        it raises (or the process dies first), a retry of the delivery is answered. The
        error of `send` propagates; nothing else raises. `admitted`: `admit` said
        "answer" before the delivery was acknowledged; otherwise it is admitted here,
        waiting while another process holds it. Lines logged meanwhile carry the
        delivery's key."""
        with delivery(question.delivery_key):
            return await self._answer(question, bot_names, send=send, admitted=admitted)

    async def _answer(self, question: Question, bot_names: Iterable[str], *,
                      send: SendReply | None, admitted: bool) -> Reply | None:
        if not admitted and await self._admit_patiently(question) != "answer":
            log.info("%s: skipping repeated delivery %s", question.platform,
                     question.delivery_key)
            return None
        reply = await self.reply_to(question, bot_names)
        try:
            if send is not None:
                await send(reply)
        except BaseException:
            await self._record(question, sent=False)
            raise
        await self._record(question, sent=True)
        return reply

    async def dismiss(self, question: Question) -> None:
        """An admitted delivery that holds nothing to answer after all: its retries are
        repeats."""
        await self._record(question, sent=True)

    async def _admit_patiently(self, question: Question) -> Admission:
        """`admit` for a delivery nobody will send again: while another process holds
        it, wait for that process to finish it or for its claim to be taken over."""
        admission = await self.admit(question)
        for wait in self.later_waits:
            if admission != "later":
                return admission
            await self.clock.sleep(wait)
            admission = await self.admit(question)
        if admission == "later":
            log.warning("%s: delivery %s is still held by another process; left to it",
                        question.platform, question.delivery_key)
        return admission

    async def _record(self, question: Question, *, sent: bool) -> None:
        """Tell the dedupe store how the delivery ended."""
        await record_outcome(self.deduper, question.platform, question.delivery_key,
                             done=sent)

    async def reply_to(self, question: Question,
                       bot_names: Iterable[str] = DEFAULT_BOT_NAMES) -> Reply:
        """Channel, language, command, handler: the reply, without dedupe (for a
        platform that dedupes earlier, before it knows whether there is a question)."""
        lang = self.default_lang
        try:
            channel = await self.handler.chat_channel(question.channel_key)
            if question.action is not None:
                lang = clicker_lang(question.user_lang, channel.lang if channel else None,
                                    self.default_lang)
                clicked = command_of_click(question.action, lang=lang)
                if isinstance(clicked, Reply):
                    return clicked
                command = clicked
            else:
                lang = preferred_lang(channel, question, self.default_lang)
                command = read_command(question, preferred=lang, bot_names=bot_names)
            lang = command.lang
            return await self.handler.handle(command, channel=channel, user=question.user_id,
                                             asker=self.asker(question))
        except Exception:
            log.exception("%s: answering a question in %s failed", question.platform,
                          question.channel_id)
            return internal_error(lang)


    def asker(self, question: Question) -> Asker:
        """Who asked `question`, with the platform's admin check bound to it."""
        check = self.chat_admins
        return Asker(chat=question.channel_key, user=question.user_id, direct=question.direct,
                     chat_admin=None if check is None else functools.partial(check, question))


def internal_error(lang: Lang) -> Reply:
    """What chat is told when answering failed: no detail (the log has it)."""
    return Reply(kind="error", lang=lang, error="internal-error")


def render_or_error(render: Callable[[Reply], list[_Message]], reply: Reply,
                    platform: str) -> list[_Message]:
    """A platform's messages for `reply`; when its renderer fails, the `internal-error`
    reply's (the log has the traceback, chat never does)."""
    try:
        return render(reply)
    except Exception:
        log.exception("%s: rendering a %s reply failed", platform, reply.kind)
        return render(internal_error(reply.lang))
