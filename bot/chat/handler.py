"""Command -> Reply: what the bot answers, as data, whatever platform asked.

Handlers never build platform strings: a `Reply` names its kind (and, for errors, a
catalog key with parameters) and the templates make the words. Every command gets a
reply - bad values, missing data and refusals become `error` replies in the user's
language, never an exception.

Source and store methods are synchronous (PyGithub, redis-py), so they run in a
worker thread and the event loop of the server stays free. A chat's own settings are
`bot.chat.settings`'s; the questions about a week are answered from its digest by
`bot.chat.answers`; with `[llm]`, text the grammar does not read may be read by the
model as one of the commands (`bot.chat.intents`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date
from typing import ParamSpec, TypeVar

import msgspec

from bot.chat import answers
from bot.chat.grammar import MAX_PULL_NUMBER
from bot.chat.inbound import Asker
from bot.chat.intents import IntentReader
from bot.chat.mutes import MUTE_KINDS, NoticeMuting
from bot.chat.refusals import Refusal, echo, error_reply
from bot.chat.settings import ChatSetup
from bot.clock import Clock
from bot.config import ChannelConfig, Config
from bot.digests import Digests
from bot.engine.classify import parse_title, topic_aliases
from bot.errors import FutureWeekError, SourceError, UncoveredWeekError, WeekError
from bot.events import CommandAnswered, Events
from bot.live import LiveConfig
from bot.models import Command, Digest, PullRequest, Reply, Snapshot, WeekAnswer
from bot.source import GitHubLookups, HeldPulls, ReviewQueue, Source
from bot.store.mutes import Mutes
from bot.store.review_queues import ReviewQueues
from bot.store.subscriptions import SubscriptionStore, followed_topics
from bot.week import FIRST_YEAR, current_week, past_week, resolve_week, shift_week

logger = logging.getLogger(__name__)

_P = ParamSpec("_P")
_R = TypeVar("_R")

# How many weeks of titles are read to find the modules a channel can subscribe to.
RECENT_WEEKS = 4
SETTING_KINDS = frozenset({"follow", "unfollow", "schedule", "timezone", "lang", "settings"})
WEEK_QUESTIONS = frozenset({"changes", "people", "compare"})
QUEUE_POINTS = 1
"""What a review-queue search costs in GitHub's points (no nested list: one point)."""

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
    "week-outside-data",
    "internal-error",
    "unknown-action",
    # a chat's own settings
    "settings-unavailable",
    "settings-failed",
    "settings-not-admin",
    "admin-unknown",
    "settings-in-file",
    "not-set-up",
    "repo-name",
    "repo-unknown",
    "follow-not-allowed",
    "follow-private",
    "already-following",
    "not-following",
    "repo-in-file",
    "too-many-chats",
    "too-many-repos",
    "schedule-unreadable",
    "unknown-timezone",
    "unknown-lang",
    "mute-length",
    # questions about the week
    "pending-unavailable",
    "github-points-low",
)
"""Every `Reply.error` a handler can give; each has a sentence in the reply templates."""


class CommandHandler:
    """Answers commands for the channels of one config, through the process's one
    `Digests`: its config, source of PR data, subscriptions and clock, so a digest asked
    for in chat is the one the schedule posts.

    `live`: the service's live config, which chats' own settings change (None: they
    are refused as needing Redis). `lookups`: GitHub asked directly (repositories a chat
    follows, the PRs waiting for review), with `queues` keeping those PRs for
    `chat.pending_minutes`. `intents`: the model that reads text the grammar does not.
    `mutes`: where chats mute their merged-PR notices, shared with the notices (None:
    `mute` is refused).
    """

    def __init__(self, digests: Digests, *, recent_weeks: int = RECENT_WEEKS,
                 live: LiveConfig | None = None, lookups: GitHubLookups | None = None,
                 queues: ReviewQueues | None = None, intents: IntentReader | None = None,
                 points_short: Callable[[int], bool] | None = None,
                 events: Events | None = None, mutes: Mutes | None = None) -> None:
        if digests.source is None:
            raise ValueError("commands are answered from a source of PR data")
        self.digests = digests
        self.source: Source = digests.source
        self.subscriptions: SubscriptionStore | None = digests.subscriptions
        self.clock: Clock = digests.clock
        self.recent_weeks = recent_weeks
        self.live = live
        self.lookups = lookups
        self.queues = queues if queues is not None else ReviewQueues(None)
        self.intents = intents
        self.points_short = points_short
        self.events = events or Events()
        self.setup = ChatSetup(live, source=self.source, lookups=lookups,
                               topics=self.subscriptions, clock=self.clock, mutes=mutes)
        self.muting = NoticeMuting(self.setup, mutes)

    @property
    def config(self) -> Config:
        """The config in force (a reload or a chat's `follow` changes it)."""
        return self.digests.config

    async def chat_channel(self, chat: str) -> ChannelConfig | None:
        """The channel `chat` is in the config in force, read again where another
        replica may have changed the chats' own settings."""
        if self.live is not None:
            await self.live.refresh()
        return self.config.channel(chat)

    async def handle(
        self, command: Command, *, channel: ChannelConfig | None, user: str | None = None,
        asker: Asker | None = None,
    ) -> Reply:
        """The reply to `command` asked in `channel` by `user`; never raises.

        `channel` is None for a chat that is not set up: it gets help, its own settings
        (`follow owner/repo` sets it up) and a polite refusal, never data. `user` is the
        platform's user id, checked against the channel's admins for subscription
        changes; `asker` says in which chat, for a change to the chat's own settings.
        The answer is a `CommandAnswered` on `events`, for the asker's platform (the
        channel's when no asker is given).
        """
        started = self.clock.monotonic()
        reply = await self._reply(command, channel, user, asker)
        platform = (asker.platform if asker is not None
                    else channel.platform if channel is not None else "unknown")
        self.events.emit(CommandAnswered(platform, command.kind, reply,
                                         self.clock.monotonic() - started))
        return reply

    async def _reply(self, command: Command, channel: ChannelConfig | None,
                     user: str | None, asker: Asker | None) -> Reply:
        try:
            if command.kind == "help" and command.unknown and self.intents is not None:
                command = await self.intents.read(command)
            return await self._dispatch(command, channel, user, asker)
        except Refusal as refusal:
            return refusal.reply
        except Exception:
            # A bug must still get the user an answer; the log keeps the traceback.
            logger.exception("command %r failed", command.text)
            return self._error(command, "internal-error")

    async def _dispatch(
        self, command: Command, channel: ChannelConfig | None, user: str | None,
        asker: Asker | None,
    ) -> Reply:
        if command.kind == "help":
            return self._help(command, channel)
        if command.kind == "hello":
            return self._hello(command, channel)
        if command.kind in SETTING_KINDS:
            return await self.setup.handle(command, self.config, channel, asker)
        if command.kind in MUTE_KINDS:
            return await self.muting.handle(command, self.config, channel, asker)
        if channel is None:
            return self._error(command, "channel-not-configured",
                               **self._self_service())
        if command.kind == "risks" and command.pull is None:
            return await self._week_risks(command, channel)
        if command.kind in ("risks", "summary"):
            return await self._pull(command, channel)
        if command.kind == "digest":
            return await self._digest(command, channel)
        if command.kind in WEEK_QUESTIONS:
            return await self._week_question(command, channel)
        if command.kind == "pending":
            return await self._pending(command, channel)
        if command.kind == "topics":
            return await self._topics(command, channel)
        return await self._change_subscription(command, channel, user, asker)

    def _self_service(self) -> dict[str, str]:
        """Whether a chat not set up may set itself up (`follow owner/repo`)."""
        open_to_chats = (self.live is not None and self.live.store is not None
                         and self.config.chat.max_channels > 0)
        return {"follow": "yes"} if open_to_chats else {}

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
        return error_reply(asked, key, topics=topics, available=available, **params)

    def _help(self, command: Command, channel: ChannelConfig | None) -> Reply:
        params: list[tuple[str, str]] = []
        if channel is not None:
            params.append(("repository", channel.scope))
            params += self._examples(channel)
        else:
            params += list(self._self_service().items())
            params.append(("example_week", shift_week(current_week(self.clock.now()), -1)))
        if command.unknown:
            params.append(("text", echo(command.text)))
        return Reply(kind="help", lang=command.lang, params=tuple(params))

    def _examples(self, channel: ChannelConfig) -> list[tuple[str, str]]:
        """The help's commands as this chat would send them: its repository's newest PR
        the data holds, the topics it follows or its repository's, last week; none of
        them looked up anew (help is answered at once)."""
        repo = channel.repositories[0]
        topics = channel.topics or tuple(self.config.repo(repo).topics)
        examples = [("example_week", shift_week(current_week(self.clock.now(),
                                                             channel.timezone), -1))]
        if topics:
            examples.append(("example_topics", " ".join(topics[:2])))
        newest = self.digests.newest_pull(repo)
        if newest is not None:
            examples.append(("example_pull", str(newest)))
        return examples

    def _hello(self, command: Command, channel: ChannelConfig | None) -> Reply:
        """A greeting: who the bot is, and the help."""
        help_reply = self._help(command, channel)
        return Reply(kind="answer", lang=command.lang, answer=WeekAnswer(question="hello"),
                     params=help_reply.params)

    # --- PRs ------------------------------------------------------------------------

    async def _pull(self, command: Command, channel: ChannelConfig) -> Reply:
        repos = self._readable_repos(command, channel)
        number = command.pull
        if number is None:
            return self._error(command, "pull-missing", command=command.kind)
        if not 1 <= number <= MAX_PULL_NUMBER:
            return self._error(command, "pull-out-of-range", number=echo(str(number)))
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
        try:
            return await self.lookup_pull(repo, number)
        except SourceError as exc:
            logger.warning("source unavailable for %r: %s", command.text, exc)
            raise Refusal(self._error(command, "source-unavailable")) from None

    async def lookup_pull(self, repo: str, number: int) -> PullRequest | None:
        """PR `number` of `repo` as `summary #N` and `risks for #N` find it: held in
        memory, else asked of the source in a worker thread (None: no such PR;
        `SourceError` when GitHub cannot say). The caller checks the repository is
        one the chat follows."""
        pull = self._held_pull(repo, number)
        if pull is None:
            pull = await asyncio.to_thread(self.source.fetch_pull, repo, number)
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
            raise Refusal(self._error(command, "repo-not-allowed",
                                       repository=echo(command.repo), allowed=channel.scope))
        return tuple(name for name in channel.repositories
                     if name.lower() == command.repo.lower())

    # --- digest ---------------------------------------------------------------------

    async def _digest(self, command: Command, channel: ChannelConfig) -> Reply:
        digest = await self._week_digest(command, channel, self._week(command, channel))
        return Reply(kind="digest", lang=command.lang, digest=digest)

    async def _week_digest(self, command: Command, channel: ChannelConfig, week: str
                           ) -> Digest:
        """The channel's digest of `week`; a week the data does not cover, or GitHub
        not answering, ends the command with the error that says which."""
        try:
            return await self.digests.for_channel(channel, week, lang=command.lang)
        except UncoveredWeekError as exc:
            logger.info("no data for %r: %s", command.text, exc)
            raise Refusal(self._error(command, "week-outside-data", week=week)) from None
        except SourceError as exc:
            logger.warning("source unavailable for %r: %s", command.text, exc)
            raise Refusal(self._error(command, "source-unavailable")) from None

    # --- questions about the week -----------------------------------------------------

    def _answer(self, command: Command, channel: ChannelConfig, answer: WeekAnswer) -> Reply:
        return Reply(kind="answer", lang=command.lang, answer=answer,
                     params=(("repository", channel.scope),))

    async def _week_risks(self, command: Command, channel: ChannelConfig) -> Reply:
        digest = await self._week_digest(command, channel, self._week(command, channel))
        return self._answer(command, channel, answers.week_risks(digest))

    async def _week_question(self, command: Command, channel: ChannelConfig) -> Reply:
        week = self._week(command, channel)
        digest = await self._week_digest(command, channel, week)
        if command.kind == "changes":
            area = command.topics[0] if command.topics else ""
            answer = answers.area_changes(digest, area, self.config)
            return Reply(kind="answer", lang=command.lang, answer=answer,
                         available_topics=answers.week_topics(digest),
                         params=(("repository", channel.scope),))
        if command.kind == "people":
            return self._answer(command, channel,
                                answers.week_people(digest, command.value or "merged"))
        before = await self._week_digest(command, channel, shift_week(week, -1))
        return self._answer(command, channel, answers.compare_weeks(digest, before))

    async def _pending(self, command: Command, channel: ChannelConfig) -> Reply:
        """The PRs waiting for review now: one GitHub search per chat and
        `chat.pending_minutes` (kept in Redis for every replica), within the points."""
        lookups = self.lookups
        if lookups is None:
            return self._error(command, "pending-unavailable")
        repos = channel.repositories
        queues = self.queues
        short = self.points_short

        def fetch() -> ReviewQueue:
            if short is not None and short(QUEUE_POINTS):
                raise _PointsLow()
            return lookups.review_queue(repos)

        ttl = self.config.chat.pending_minutes * 60
        try:
            queue = await asyncio.to_thread(queues.queue, repos, fetch, ttl_seconds=ttl)
        except _PointsLow:
            return self._error(command, "github-points-low")
        except SourceError as exc:
            logger.warning("review queue of %s unavailable: %s", channel.scope, exc)
            return self._error(command, "source-unavailable")
        return self._answer(command, channel,
                            answers.review_queue(queue, repos, self.clock.now()))

    def _week(self, command: Command, channel: ChannelConfig) -> str:
        """The ISO week the command names, in the channel's time zone; `this` by default."""
        asked = command.week or "this"
        now = self.clock.now()
        try:
            return past_week(resolve_week(asked, now, channel.timezone), now, channel.timezone)
        except FutureWeekError as exc:
            raise Refusal(self._error(command, "week-in-future", week=exc.week,
                                       current=exc.current)) from None
        except (WeekError, ValueError, OverflowError):
            raise Refusal(self._unknown_week(command, asked)) from None

    def _unknown_week(self, command: Command, asked: str) -> Reply:
        match = re.fullmatch(r"(\d{4})-W(\d+)", asked)
        if match and int(match[1]) >= FIRST_YEAR:
            year = int(match[1])
            weeks = date(year, 12, 28).isocalendar().week
            return self._error(command, "unknown-week", week=asked, year=str(year),
                               weeks=str(weeks))
        return self._error(command, "unknown-week", week=echo(asked))

    # --- topics and subscriptions ---------------------------------------------------

    async def _topics(self, command: Command, channel: ChannelConfig) -> Reply:
        subscribed = await self._subscribed(command, channel)
        known, _ = await self._known_topics(channel, subscribed)
        return Reply(kind="topics", lang=command.lang, topics=tuple(subscribed),
                     available_topics=tuple(known),
                     params=(("repository", channel.scope),))

    async def _change_subscription(
        self, command: Command, channel: ChannelConfig, user: str | None,
        asker: Asker | None = None,
    ) -> Reply:
        store = self.subscriptions
        if store is None:
            return self._error(command, "subscriptions-unavailable")
        if channel.admins and user not in channel.admins:
            return self._error(command, "not-admin")
        if asker is not None and self.live is not None and \
                self.live.origin(asker.chat) == "chat":
            # A chat set up from chat: its topics are its settings, changed by those who
            # may change them.
            await self.setup.check_asker(command, self.config, channel, asker)
        subscribed = await self._subscribed(command, channel)
        known, complete = await self._known_topics(channel, subscribed)
        command = self._aliases_resolved(command, channel)
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

    def _aliases_resolved(self, command: Command, channel: ChannelConfig) -> Command:
        """The command with each topic alias written as its topic (`ckpt` is
        `checkpoint` with `aliases = ["ckpt"]`): one topic, whichever name is typed."""
        aliases: dict[str, str] = {}
        for repo in channel.repositories:
            aliases |= topic_aliases(self.config.repo(repo))
        names = tuple(dict.fromkeys(aliases.get(name.lower(), name) for name in command.topics))
        return msgspec.structs.replace(command, topics=names)

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
        aliases: dict[str, str] = {}
        for repo in channel.repositories:
            aliases |= topic_aliases(self.config.repo(repo))
        folded: Counter[str] = Counter()
        for module, count in modules.items():
            folded[aliases.get(module, module)] += count  # `[ckpt]` is `checkpoint`
        modules = folded
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
            raise Refusal(self._error(command, "source-unavailable")) from None

    async def _call_store(
        self, command: Command, method: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs
    ) -> _R:
        """A store call in a worker thread; a store that fails (Redis down) ends the
        command with a friendly error rather than a traceback in chat."""
        try:
            return await asyncio.to_thread(method, *args, **kwargs)
        except Exception:
            logger.exception("subscription store failed for %r", command.text)
            raise Refusal(self._error(command, "subscriptions-failed")) from None


class _PointsLow(Exception):
    """GitHub's points are too low for a review-queue search (kept for the posts)."""
