"""Command -> Reply: what the bot answers, as data, whatever platform asked.

Handlers never build platform strings: a `Reply` names its kind (and, for errors, a
catalog key with parameters) and the templates make the words. Every command gets a
reply - bad values, missing data and refusals become `error` replies in the user's
language, never an exception.

Source and store methods are synchronous (PyGithub, redis-py), so they run in a
worker thread and the event loop of the server stays free.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date
from typing import ParamSpec, TypeVar

from bot.chat.grammar import MAX_PULL_NUMBER
from bot.clock import Clock
from bot.config import ChannelConfig, Config
from bot.digests import Digests
from bot.engine.classify import parse_title
from bot.errors import FutureWeekError, SourceError, WeekError
from bot.events import CommandAnswered, Events
from bot.models import Command, PullRequest, Reply, Snapshot
from bot.source import HeldPulls, Source
from bot.store.subscriptions import SubscriptionStore, followed_topics
from bot.week import FIRST_YEAR, current_week, past_week, resolve_week, shift_week

logger = logging.getLogger(__name__)

_P = ParamSpec("_P")
_R = TypeVar("_R")

# How many weeks of titles are read to find the modules a channel can subscribe to.
RECENT_WEEKS = 4
# Echoed user text and numbers are cut, so an error reply stays one short line.
ECHO_LIMIT = 80

ERROR_KEYS = (
    "channel-not-configured",
    "pull-missing",
    "pull-out-of-range",
    "pull-not-found",
    "pull-ambiguous",
    "repo-not-allowed",
    "unknown-week",
    "week-in-future",
    "topics-missing",
    "unknown-topic",
    "topic-configured",
    "not-admin",
    "subscriptions-unavailable",
    "subscriptions-failed",
    "source-unavailable",
    "internal-error",
)
"""Every `Reply.error` a handler can give; each has a sentence in the reply templates."""


def _echo(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ECHO_LIMIT else text[: ECHO_LIMIT - 1] + "…"


class _Refusal(Exception):
    """A reply that ends the command early; carries the error reply to give."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.error)
        self.reply = reply


class CommandHandler:
    """Answers commands for the channels of one config, through the process's one
    `Digests`: its config, source of PR data, subscriptions and clock, so a digest asked
    for in chat is the one the schedule posts."""

    def __init__(self, digests: Digests, *, recent_weeks: int = RECENT_WEEKS,
                 events: Events | None = None) -> None:
        if digests.source is None:
            raise ValueError("commands are answered from a source of PR data")
        self.digests = digests
        self.config: Config = digests.config
        self.source: Source = digests.source
        self.subscriptions: SubscriptionStore | None = digests.subscriptions
        self.clock: Clock = digests.clock
        self.recent_weeks = recent_weeks
        self.events = events or Events()

    async def handle(
        self, command: Command, *, channel: ChannelConfig | None, user: str | None = None,
        platform: str = "",
    ) -> Reply:
        """The reply to `command` asked in `channel` by `user`; never raises.

        `channel` is None for a chat that is not in the config: it gets help and a
        polite refusal, never data. `user` is the platform's user id, checked against
        the channel's admins for subscription changes. The answer is a `CommandAnswered`
        on `events`, for `platform` (the channel's when not given).
        """
        started = self.clock.monotonic()
        reply = await self._reply(command, channel, user)
        self.events.emit(CommandAnswered(
            platform or (channel.platform if channel is not None else "unknown"),
            command.kind, reply, self.clock.monotonic() - started))
        return reply

    async def _reply(self, command: Command, channel: ChannelConfig | None,
                     user: str | None) -> Reply:
        try:
            return await self._dispatch(command, channel, user)
        except _Refusal as refusal:
            return refusal.reply
        except Exception:
            # A bug must still get the user an answer; the log keeps the traceback.
            logger.exception("command %r failed", command.text)
            return self._error(command, "internal-error")

    async def _dispatch(
        self, command: Command, channel: ChannelConfig | None, user: str | None
    ) -> Reply:
        if command.kind == "help":
            return self._help(command, channel)
        if channel is None:
            return self._error(command, "channel-not-configured")
        if command.kind in ("risks", "summary"):
            return await self._pull(command, channel)
        if command.kind == "digest":
            return await self._digest(command, channel)
        if command.kind == "topics":
            return await self._topics(command, channel)
        return await self._change_subscription(command, channel, user)

    # --- replies --------------------------------------------------------------------

    @staticmethod
    def _error(
        asked: Command,
        key: str,
        /,
        *,
        topics: Iterable[str] = (),
        available: Iterable[str] = (),
        **params: str,
    ) -> Reply:
        return Reply(kind="error", lang=asked.lang, error=key, topics=tuple(topics),
                     available_topics=tuple(available), params=tuple(params.items()))

    def _help(self, command: Command, channel: ChannelConfig | None) -> Reply:
        params: list[tuple[str, str]] = []
        if channel is not None:
            params.append(("repository", channel.scope))
        if command.unknown:
            params.append(("text", _echo(command.text)))
        return Reply(kind="help", lang=command.lang, params=tuple(params))

    # --- PRs ------------------------------------------------------------------------

    async def _pull(self, command: Command, channel: ChannelConfig) -> Reply:
        repos = self._readable_repos(command, channel)
        number = command.pull
        if number is None:
            return self._error(command, "pull-missing", command=command.kind)
        if not 1 <= number <= MAX_PULL_NUMBER:
            return self._error(command, "pull-out-of-range", number=_echo(str(number)))
        found = [(repo, pull) for repo in repos
                 if (pull := await self._find_pull(command, repo, number)) is not None]
        if not found:
            return self._error(command, "pull-not-found", number=str(number),
                               repository=", ".join(repos))
        if len(found) > 1:
            return self._error(command, "pull-ambiguous", number=str(number),
                               choices=", ".join(f"{repo}#{number}" for repo, _ in found))
        repo, pull = found[0]
        answer = await self.digests.pull_answer(pull, repo, command.lang, channel)
        return Reply(kind="pull", lang=command.lang, pull=answer, mode=command.kind,
                     params=channel.pull_scope(repo))

    async def _find_pull(self, command: Command, repo: str, number: int
                         ) -> PullRequest | None:
        pull = self._held_pull(repo, number)
        if pull is None:
            pull = await self._call_source(command, self.source.fetch_pull, repo, number)
        return pull

    def _held_pull(self, repo: str, number: int) -> PullRequest | None:
        """A PR the source holds in memory; a failure here only means asking it properly."""
        if not isinstance(self.source, HeldPulls):
            return None
        try:
            return self.source.held_pull(repo, number)
        except Exception:
            logger.exception("reading held PR %s#%s failed", repo, number)
            return None

    def _readable_repos(self, command: Command, channel: ChannelConfig) -> tuple[str, ...]:
        """Where a PR is looked for: the repository `owner/repo#N` names, which must be
        one of the channel's, or, for a bare `#N`, each of the channel's repositories
        (the PR is answered when exactly one of them has it)."""
        if command.repo is None:
            return channel.repositories
        if not channel.follows(command.repo):
            raise _Refusal(self._error(command, "repo-not-allowed",
                                       repository=_echo(command.repo), allowed=channel.scope))
        return tuple(name for name in channel.repositories
                     if name.lower() == command.repo.lower())

    # --- digest ---------------------------------------------------------------------

    async def _digest(self, command: Command, channel: ChannelConfig) -> Reply:
        week = self._week(command, channel)
        try:
            digest = await self.digests.for_channel(channel, week, lang=command.lang)
        except SourceError as exc:
            logger.warning("source unavailable for %r: %s", command.text, exc)
            return self._error(command, "source-unavailable")
        return Reply(kind="digest", lang=command.lang, digest=digest)

    def _week(self, command: Command, channel: ChannelConfig) -> str:
        """The ISO week the command names, in the channel's time zone; `this` by default."""
        asked = command.week or "this"
        now = self.clock.now()
        try:
            return past_week(resolve_week(asked, now, channel.timezone), now, channel.timezone)
        except FutureWeekError as exc:
            raise _Refusal(self._error(command, "week-in-future", week=exc.week,
                                       current=exc.current)) from None
        except (WeekError, ValueError, OverflowError):
            raise _Refusal(self._unknown_week(command, asked)) from None

    def _unknown_week(self, command: Command, asked: str) -> Reply:
        match = re.fullmatch(r"(\d{4})-W(\d+)", asked)
        if match and int(match[1]) >= FIRST_YEAR:
            year = int(match[1])
            weeks = date(year, 12, 28).isocalendar().week
            return self._error(command, "unknown-week", week=asked, year=str(year),
                               weeks=str(weeks))
        return self._error(command, "unknown-week", week=_echo(asked))

    # --- topics and subscriptions ---------------------------------------------------

    async def _topics(self, command: Command, channel: ChannelConfig) -> Reply:
        subscribed = await self._subscribed(command, channel)
        known, _ = await self._known_topics(channel, subscribed)
        return Reply(kind="topics", lang=command.lang, topics=tuple(subscribed),
                     available_topics=tuple(known),
                     params=(("repository", channel.scope),))

    async def _change_subscription(
        self, command: Command, channel: ChannelConfig, user: str | None
    ) -> Reply:
        store = self.subscriptions
        if store is None:
            return self._error(command, "subscriptions-unavailable")
        if channel.admins and user not in channel.admins:
            return self._error(command, "not-admin")
        subscribed = await self._subscribed(command, channel)
        known, complete = await self._known_topics(channel, subscribed)
        if not command.topics:
            # Unsubscribing: the topics that could be named are the ones followed now.
            followed = subscribed if command.kind == "unsubscribe" else ()
            return self._error(command, "topics-missing", topics=followed, available=known,
                               command=command.kind)
        by_name = {name.lower(): name for name in known}
        unknown = [name for name in command.topics if name.lower() not in by_name]
        if unknown and not complete:
            # The titles could not be read, so an unknown name may be a real module.
            return self._error(command, "source-unavailable")
        if unknown:
            return self._error(command, "unknown-topic", topics=unknown, available=known)
        names = tuple(by_name[name.lower()] for name in command.topics)
        key = channel.key
        if command.kind == "subscribe":
            await self._call_store(command, store.add, key, names)
            return Reply(kind="subscribed", lang=command.lang, topics=names,
                         params=(("repository", channel.scope),))
        configured = [name for name in names if name in channel.topics]
        if configured:
            return self._error(command, "topic-configured", topics=configured)
        await self._call_store(command, store.remove, key, names)
        return Reply(kind="unsubscribed", lang=command.lang, topics=names,
                     params=(("repository", channel.scope),))

    async def _subscribed(self, command: Command, channel: ChannelConfig) -> list[str]:
        """The channel's configured topics, then those added from chat; a store that fails
        ends the command with a friendly error."""
        return await self._call_store(command, followed_topics, channel, self.subscriptions)

    async def _known_topics(
        self, channel: ChannelConfig, subscribed: list[str]
    ) -> tuple[list[str], bool]:
        """Topics one can subscribe to: the repository's configured ones, then the modules
        of recent PR titles, busiest first. False when some weeks could not be read."""
        names = [name for repo in channel.repositories for name in self.config.repo(repo).topics]
        names = list(dict.fromkeys(names))
        names += [name for name in subscribed if name not in names]
        this_week = current_week(self.clock.now(), channel.timezone)
        weeks = [shift_week(this_week, -offset) for offset in range(self.recent_weeks)]
        # One worker thread reads the weeks in turn: sources keep state (rate limits,
        # the cache's last outcome) that is not meant for concurrent calls.
        snapshots: list[Snapshot] = []
        complete = True
        for repo in channel.repositories:
            read, whole = await asyncio.to_thread(self._read_weeks, repo, weeks)
            snapshots += read
            complete = complete and whole
        modules: Counter[str] = Counter()
        for snapshot in snapshots:
            for pull in snapshot.pulls:
                modules.update(parse_title(pull.title).modules)
        lowered = {name.lower() for name in names}
        busiest = sorted(modules.items(), key=lambda item: (-item[1], item[0]))
        names += [name for name, _ in busiest if name.lower() not in lowered]
        return names, complete

    # --- calls out -------------------------------------------------------------------

    def _read_weeks(self, repo: str, weeks: list[str]) -> tuple[list[Snapshot], bool]:
        """The weeks' snapshots, each once (one file may serve them all), and whether
        every week could be read."""
        snapshots: list[Snapshot] = []
        complete = True
        for week in weeks:
            try:
                snapshot = self.source.fetch_week(repo, week).snapshot
            except SourceError as exc:
                logger.warning("titles of %s %s unavailable: %s", repo, week, exc)
                complete = False
                continue
            if not any(snapshot is seen for seen in snapshots):
                snapshots.append(snapshot)
        return snapshots, complete

    async def _call_source(
        self, command: Command, method: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs
    ) -> _R:
        """A source call in a worker thread; GitHub being unavailable ends the command
        with a friendly error (the log keeps the reason, which may name the setup)."""
        try:
            return await asyncio.to_thread(method, *args, **kwargs)
        except SourceError as exc:
            logger.warning("source unavailable for %r: %s", command.text, exc)
            raise _Refusal(self._error(command, "source-unavailable")) from None

    async def _call_store(
        self, command: Command, method: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs
    ) -> _R:
        """A store call in a worker thread; a store that fails (Redis down) ends the
        command with a friendly error rather than a traceback in chat."""
        try:
            return await asyncio.to_thread(method, *args, **kwargs)
        except Exception:
            logger.exception("subscription store failed for %r", command.text)
            raise _Refusal(self._error(command, "subscriptions-failed")) from None

