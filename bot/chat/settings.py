"""A chat's own settings, changed from chat: `follow`/`unfollow` a repository, its weekly
`schedule`, `timezone` and `lang`, and `settings` (what the chat gets and when).

Every change is checked before anything is stored: who asks (`[chat].changes_by`, the
chat's admins on its platform), what may be followed (`[chat].repos`, private ones only
from `[chat].private_repos`, a repository GitHub has), whether a channel of the config
file may be changed from chat (`[chat].file_channels`), how many chats may set
themselves up (`[chat].max_channels`). A refusal is an error reply in the asker's
language and stores nothing. A change is stored through `bot.store.chat_settings` and
put in force at once (`bot.live.LiveConfig.changed`); the other replicas read it at
their next refresh.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import ParamSpec, TypeVar

import msgspec
from croniter import croniter

from bot.chat.inbound import Asker
from bot.chat.refusals import echo, refuse
from bot.chat.setting_phrases import weekly_parts
from bot.clock import Clock
from bot.config import ChannelConfig, Config, schedule_problem
from bot.config_fields import check_repo_name
from bot.errors import ConfigError, SourceError
from bot.live import CHAT_SETTINGS, LiveConfig, follow_refusal
from bot.models import ChatOverview, Command, Reply
from bot.source import GitHubLookups, RepoFacts, SnapshotSource, Source
from bot.store.chat_settings import ChatSettings, ChatSettingsStore
from bot.store.coordination import StoreUnavailable
from bot.store.mutes import Mutes
from bot.store.subscriptions import TopicStore, followed_topics
from bot.week import zone

log = logging.getLogger(__name__)

_P = ParamSpec("_P")
_R = TypeVar("_R")

MOST_FOLLOWED = 10
"""Repositories one chat may follow from chat: each one's week is fetched for its digest."""
FILE_SETTINGS = ("repositories", *CHAT_SETTINGS)
"""What `settings` shows as fixed by the config file where chat may not change it."""


class ChatSetup:
    """Answers the setting commands of chats, for the service's live config.

    `live` is None where the config cannot change (the CLI): every change is then
    refused as needing Redis. `lookups` asks GitHub whether a repository exists and is
    private (None: only repositories the config or the snapshot files know). `mutes`:
    where the chats' merged-PR notices are muted (`settings` shows a mute in force).
    """

    def __init__(self, live: LiveConfig | None, *, source: Source | None,
                 lookups: GitHubLookups | None, topics: TopicStore | None,
                 clock: Clock, mutes: Mutes | None = None) -> None:
        self.live = live
        self.source = source
        self.lookups = lookups
        self.topics = topics
        self.clock = clock
        self.mutes = mutes

    def store(self, command: Command) -> ChatSettingsStore:
        """Where chats' settings are kept; refused (nothing stored) without Redis."""
        if self.live is None or self.live.store is None:
            raise refuse(command, "settings-unavailable")
        return self.live.store

    async def handle(self, command: Command, config: Config, channel: ChannelConfig | None,
                     asker: Asker | None) -> Reply:
        """The reply to a setting command asked in `channel` (None: a chat not set up)."""
        if command.kind == "settings":
            chat = asker.chat if asker is not None else (channel.key if channel else "")
            return await self.overview(command, config, chat, changed="")
        if asker is None:
            raise refuse(command, "settings-unavailable")
        store = self.store(command)
        await self.check_asker(command, config, channel, asker)
        in_file = config.channel(asker.chat) is not None and self._file(config, asker.chat)
        if in_file and config.chat.file_channels == "file":
            raise refuse(command, "settings-in-file")
        saved = await self._call(command, store.get, asker.chat) or ChatSettings()
        if command.kind == "follow":
            changed = await self._follow(command, config, asker, saved)
            return await self._store(command, config, asker, store, changed, "follow",
                                     repository=changed.repos[-1])
        if command.kind == "unfollow":
            return await self._unfollow(command, config, asker, store, saved)
        if channel is None:
            raise refuse(command, "not-set-up")
        value = self._value(command)
        file_channel = self.live.file.channel(asker.chat) if self.live else None
        file_values = dict(saved.file_values)
        if file_channel is not None:
            file_values[command.kind] = str(getattr(file_channel, command.kind))
        changed = msgspec.structs.replace(saved, file_values=file_values,
                                          **{command.kind: value})
        return await self._store(command, config, asker, store, changed, command.kind)

    def _file(self, config: Config, chat: str) -> bool:
        """Whether the config file (not chat) lists the chat."""
        return self.live is None or self.live.file.channel(chat) is not None

    # --- who may change ---------------------------------------------------------------

    async def check_asker(self, command: Command, config: Config,
                           channel: ChannelConfig | None, asker: Asker) -> None:
        platform = asker.chat.partition(":")[0]
        bounds = config.chat
        if bounds.listed_admin(platform, asker.user):
            return
        if channel is not None and channel.admins and self._file(config, asker.chat):
            if asker.user in channel.admins:
                return
            raise refuse(command, "settings-not-admin")
        if bounds.changes_by == "anyone":
            return
        if bounds.changes_by == "chat-admins":
            if asker.direct:
                return
            if asker.chat_admin is not None:
                try:
                    if await asker.chat_admin():
                        return
                except Exception as exc:
                    log.warning("%s: could not tell whether %s is an admin (%s: %s)",
                                asker.chat, asker.user, type(exc).__name__, exc)
                    raise refuse(command, "admin-unknown") from None
        raise refuse(command, "settings-not-admin",
                     by="listed" if bounds.changes_by == "listed" else "admins")

    # --- values -----------------------------------------------------------------------

    @staticmethod
    def _value(command: Command) -> str:
        """The setting's value, checked; refused with what is wrong."""
        value = command.value
        if command.kind == "schedule":
            if not value or schedule_problem(value) is not None:
                raise refuse(command, "schedule-unreadable", text=echo(command.text))
        elif command.kind == "timezone":
            try:
                zone(value)
            except Exception:
                raise refuse(command, "unknown-timezone", timezone=echo(value)) from None
        elif value not in ("zh", "en"):
            raise refuse(command, "unknown-lang", lang=echo(value))
        return value

    # --- repositories -----------------------------------------------------------------

    async def _follow(self, command: Command, config: Config, asker: Asker,
                      saved: ChatSettings) -> ChatSettings:
        asked = command.repo or ""
        try:
            check_repo_name(asked, "repo")
        except ConfigError:
            raise refuse(command, "repo-name", repository=echo(asked)) from None
        known = follow_refusal(config, asked, private=False)
        if known is not None:
            # Refused before GitHub is asked: what the bounds alone exclude costs nothing.
            raise refuse(command, "follow-not-allowed" if known == "repo-not-allowed"
                         else "follow-private", repository=asked)
        facts = await self._repository(command, config, asked)
        if facts is None:
            raise refuse(command, "repo-unknown", repository=asked)
        refusal = follow_refusal(config, facts.name, private=facts.private)
        if refusal is not None:
            raise refuse(command, "follow-not-allowed" if refusal == "repo-not-allowed"
                         else "follow-private", repository=facts.name)
        name = config.configured_name(facts.name) or facts.name
        channel = config.channel(asker.chat)
        if channel is not None and channel.follows(name):
            raise refuse(command, "already-following", repository=name)
        if len(saved.repos) >= MOST_FOLLOWED:
            raise refuse(command, "too-many-repos", most=str(MOST_FOLLOWED))
        first = not saved.repos and config.channel(asker.chat) is None
        return msgspec.structs.replace(
            saved, repos=(*saved.repos, name),
            private=(*saved.private, name) if facts.private else saved.private,
            lang=saved.lang or (command.lang if first else None))

    async def _repository(self, command: Command, config: Config, repo: str
                          ) -> RepoFacts | None:
        """The repository as GitHub knows it; without GitHub (snapshot files), as the
        config or the files know it."""
        if self.lookups is None:
            name = config.configured_name(repo)
            if name is not None:
                return RepoFacts(name=name, private=config.repo(name).private)
            if isinstance(self.source, SnapshotSource) and self.source.holds(repo):
                return RepoFacts(name=self.source.snapshot_of(repo).repository, private=False)
            return None
        try:
            return await asyncio.to_thread(self.lookups.repository, repo)
        except SourceError as exc:
            log.warning("repository %s could not be looked up: %s", repo, exc)
            raise refuse(command, "source-unavailable") from None

    async def _unfollow(self, command: Command, config: Config, asker: Asker,
                        store: ChatSettingsStore, saved: ChatSettings) -> Reply:
        asked = (command.repo or "").lower()
        kept = tuple(name for name in saved.repos if name.lower() != asked)
        if len(kept) == len(saved.repos):
            file_channel = self.live.file.channel(asker.chat) if self.live else None
            if file_channel is not None and file_channel.follows(asked):
                raise refuse(command, "repo-in-file", repository=echo(command.repo or ""))
            raise refuse(command, "not-following", repository=echo(command.repo or ""))
        gone = next(name for name in saved.repos if name.lower() == asked)
        changed = msgspec.structs.replace(saved, repos=kept, private=tuple(
            name for name in saved.private if name.lower() != asked))
        if not kept and not self._file(config, asker.chat):
            await self._call(command, store.remove, asker.chat)
            assert self.live is not None
            self.live.changed(asker.chat, None)
            await self._forget_mute(asker.chat)
            return await self.overview(command, self.live.current, asker.chat,
                                       changed="unfollow", repository=gone)
        return await self._store(command, config, asker, store, changed, "unfollow",
                                 repository=gone)

    # --- storing and showing ----------------------------------------------------------

    async def _store(self, command: Command, config: Config, asker: Asker,
                     store: ChatSettingsStore, settings: ChatSettings, changed: str,
                     **params: str) -> Reply:
        stamped = msgspec.structs.replace(settings, changed_by=f"{asker.chat.partition(':')[0]}:"
                                          f"{asker.user or ''}", changed_at=self.clock.now())
        new_chat = config.channel(asker.chat) is None
        most = config.chat.max_channels if new_chat else None
        if not await self._call(command, store.put, asker.chat, stamped, most=most):
            raise refuse(command, "too-many-chats")
        assert self.live is not None
        self.live.changed(asker.chat, stamped)
        log.info("%s: %s set from chat by %s", asker.chat, changed, asker.user)
        return await self.overview(command, self.live.current, asker.chat, changed=changed,
                                   **params)

    async def overview(self, command: Command, config: Config, chat: str, *,
                       changed: str, **params: str) -> Reply:
        """What `chat` gets and when (`changed`: the setting just changed)."""
        channel = config.channel(chat) if chat else None
        origin = self.live.origin(chat) if self.live is not None and chat else (
            "file" if channel is not None else "none")
        if channel is None:
            overview = ChatOverview(chat=chat, origin="none", lang=command.lang)
        else:
            topics = await self._topics(channel)
            fixed = FILE_SETTINGS if origin == "file" and config.chat.file_channels == "file" \
                else ()
            days, time = weekly_parts(channel.schedule) or ((), "")
            muted, muted_until = await self._muted(channel)
            overview = ChatOverview(
                chat=chat, origin=origin, repositories=channel.repositories,
                lang=channel.lang, schedule=channel.schedule, days=days, time=time,
                timezone=channel.timezone, next_post=self._next_post(channel),
                topics=tuple(topics), fixed=fixed, muted=muted, muted_until=muted_until)
        return Reply(kind="settings", lang=command.lang, mode=changed, overview=overview,
                     params=tuple(params.items()))

    async def _topics(self, channel: ChannelConfig) -> list[str]:
        try:
            return await asyncio.to_thread(followed_topics, channel, self.topics)
        except StoreUnavailable as exc:
            log.warning("topics of %s unreadable: %s", channel.key, exc)
            return list(channel.topics)

    async def _forget_mute(self, chat: str) -> None:
        """A forgotten chat's mute goes with it: following again starts unmuted."""
        if self.mutes is None:
            return
        try:
            await self.mutes.unmute(chat)
        except StoreUnavailable as exc:  # it expires on its own, or stays until unmuted
            log.warning("mute of forgotten chat %s not removed: %s", chat, exc)

    async def _muted(self, channel: ChannelConfig) -> tuple[bool, datetime | None]:
        """Whether the channel's notices are muted, and until when in its time zone."""
        if self.mutes is None:
            return False, None
        try:
            mute = await self.mutes.get(channel.key)
        except StoreUnavailable as exc:
            log.warning("notice mute of %s unreadable: %s", channel.key, exc)
            return False, None
        if mute is None:
            return False, None
        until = mute.until.astimezone(zone(channel.timezone)) if mute.until else None
        return True, until

    def _next_post(self, channel: ChannelConfig) -> datetime | None:
        if not channel.weekly:
            return None
        try:
            fired: datetime = croniter(channel.schedule, self.clock.now().astimezone(
                zone(channel.timezone))).get_next(datetime)
        except Exception:
            return None
        return fired

    @staticmethod
    async def _call(command: Command, method: Callable[_P, _R], *args: _P.args,
                    **kwargs: _P.kwargs) -> _R:
        """A store call in a worker thread; Redis failing refuses the change, stored
        nowhere."""
        try:
            return await asyncio.to_thread(method, *args, **kwargs)
        except StoreUnavailable as exc:
            log.warning("chat settings store failed for %r: %s: %s", command.text,
                        type(exc).__name__, exc)
            raise refuse(command, "settings-failed") from None
