"""A chat platform in two queues, chat's stores in dicts, and sources that fail.

`ChatTestBackend` follows errbot's TestBackend: push a message in, pop the reply out,
so an end-to-end command test is one line. It goes through the same path a real
adapter does: text -> `parse_command` -> `CommandHandler.handle` -> `render_reply`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.clock import Clock
from bot.config import ChannelConfig
from bot.errors import SourceError
from bot.models import Lang, PullRequest, Reply, Snapshot
from bot.render import render_reply
from bot.source import SnapshotSource, WeekData
from bot.store.chat_settings import ChatSettings
from bot.store.coordination import StoreUnavailable


class InMemorySubscriptionStore:
    """`SubscriptionStore` in a dict; `fail` makes every call raise `StoreUnavailable`, as
    the Redis one does while Redis is down."""

    def __init__(self, initial: dict[str, set[str]] | None = None) -> None:
        self.by_channel: dict[str, set[str]] = {k: set(v) for k, v in (initial or {}).items()}
        self.fail = False

    def _check(self) -> None:
        if self.fail:
            raise StoreUnavailable("ConnectionError", "store unavailable")

    def topics(self, channel_key: str) -> set[str]:
        self._check()
        return set(self.by_channel.get(channel_key, set()))

    def add(self, channel_key: str, topics: Iterable[str]) -> None:
        self._check()
        self.by_channel.setdefault(channel_key, set()).update(topics)

    def remove(self, channel_key: str, topics: Iterable[str]) -> None:
        self._check()
        self.by_channel.get(channel_key, set()).difference_update(topics)


class InMemoryChatSettings:
    """`ChatSettingsStore` in a dict, with the Redis one's revision and limit; `fail`
    makes every call raise `StoreUnavailable`, as the Redis one does while Redis is down."""

    def __init__(self) -> None:
        self.chats: dict[str, ChatSettings] = {}
        self.fail = False
        self.writes = 0
        self._revision: str | None = None

    def _check(self) -> None:
        if self.fail:
            raise StoreUnavailable("ConnectionError", "store unavailable")

    def revision(self) -> str | None:
        self._check()
        return self._revision

    def all(self) -> dict[str, ChatSettings]:
        self._check()
        return dict(self.chats)

    def get(self, chat: str) -> ChatSettings | None:
        self._check()
        return self.chats.get(chat)

    def put(self, chat: str, settings: ChatSettings, *, most: int | None = None) -> bool:
        self._check()
        if most is not None and chat not in self.chats and len(self.chats) >= most:
            return False
        self.chats[chat] = settings
        self.writes += 1
        self._revision = str(self.writes)
        return True

    def remove(self, chat: str) -> None:
        self._check()
        if self.chats.pop(chat, None) is not None:
            self.writes += 1
            self._revision = str(self.writes)


class InMemoryReviewQueues:
    """`ReviewQueueStore` in a dict, its entries expiring on `clock`; `fail` makes every
    call raise `StoreUnavailable`, as the Redis one does while Redis is down."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.entries: dict[str, tuple[bytes, float]] = {}
        self.fail = False

    def _check(self) -> None:
        if self.fail:
            raise StoreUnavailable("ConnectionError", "store unavailable")

    def get(self, key: str) -> bytes | None:
        self._check()
        value, until = self.entries.get(key, (b"", 0.0))
        return value if until > self.clock.monotonic() else None

    def claim(self, key: str, ttl_seconds: int) -> bool:
        if self.get(key) is not None:
            return False
        self.put(key, b"claimed", ttl_seconds)
        return True

    def put(self, key: str, value: bytes, ttl_seconds: int) -> None:
        self._check()
        self.entries[key] = (value, self.clock.monotonic() + ttl_seconds)


class RecordingSource(SnapshotSource):
    """A snapshot source that records what was asked, in which thread, and can fail.

    `fail_weeks` raise `SourceError` for those weeks; `error` is raised by every call
    (e.g. a `SourceError`, or a `RuntimeError` standing for a bug); `stale_age` serves
    every week as a stale cached copy of that age in seconds.
    """

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__(snapshot)
        self.week_calls: list[str] = []
        self.pull_calls: list[tuple[str, int]] = []
        self.threads: set[int] = set()
        self.fail_weeks: set[str] = set()
        self.error: Exception | None = None
        self.stale_age: float | None = None

    def fetch_week(self, repo: str, week: str) -> WeekData:
        self.threads.add(threading.get_ident())
        self.week_calls.append(week)
        if self.error is not None:
            raise self.error
        if week in self.fail_weeks:
            raise SourceError(f"GitHub said no to {repo} {week} (token GITHUB_TOKEN)")
        data = super().fetch_week(repo, week)
        if self.stale_age is not None:
            return WeekData(snapshot=data.snapshot, stale=True, age_seconds=self.stale_age)
        return data

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        self.threads.add(threading.get_ident())
        self.pull_calls.append((repo, number))
        if self.error is not None:
            raise self.error
        return super().fetch_pull(repo, number)


@dataclass(frozen=True)
class Sent:
    """One reply the bot sent: the data, and its words in the backend's format."""

    reply: Reply
    fmt: str

    @property
    def text(self) -> str:
        return render_reply(self.reply, self.fmt)


@dataclass
class ChatTestBackend:
    """Messages in, replies out, for one channel (None: a chat not in the config)."""

    handler: CommandHandler
    channel: ChannelConfig | None
    user: str | None = "U_ALICE"
    fmt: str = "text"
    incoming: asyncio.Queue[tuple[str, str | None, Lang | None]] = field(
        default_factory=asyncio.Queue
    )
    outgoing: asyncio.Queue[Sent] = field(default_factory=asyncio.Queue)

    def push_message(self, text: str, *, user: str | None = None, lang: Lang | None = None) -> None:
        self.incoming.put_nowait((text, user or self.user, lang))

    async def pop_message(self) -> Sent:
        """Answer everything pushed so far, then give the oldest reply not yet popped."""
        while not self.incoming.empty():
            text, user, lang = self.incoming.get_nowait()
            command = parse_command(text, lang=lang,
                                    default_lang=self.channel.lang if self.channel else "en")
            reply = await self.handler.handle(command, channel=self.channel, user=user)
            self.outgoing.put_nowait(Sent(reply=reply, fmt=self.fmt))
        return self.outgoing.get_nowait()

    async def ask(self, text: str, *, user: str | None = None, lang: Lang | None = None) -> Sent:
        """Push one message and pop its reply."""
        self.push_message(text, user=user, lang=lang)
        return await self.pop_message()
