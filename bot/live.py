"""The config in force while the service runs: the config file as last (re)loaded, and
the chats that set themselves up from chat.

Every long-lived part of the service (the digests, chat, the schedule, notices, the
poller, report pages) reads `LiveConfig.current`, one `Config` in which the chats set up
from chat are channels like the file's and the repositories they follow are
repositories like the file's (with the defaults). So a chat-made channel gets its
weekly post, its merge notices and its report links exactly as a file channel does, and
a reload (SIGHUP, `prdigest reload`) or a chat's `follow` takes effect in all of them
at once, with nothing restarted.

The operator's bounds (`[chat]`) are applied here, each time the config is made: a
repository the file no longer allows is dropped from the chats that followed it, and a
channel the file lists keeps the file's settings unless `chat.file_channels = "chat"`
lets chat change it - and even then a setting the file changes afterwards wins again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Literal

import msgspec

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import (
    ChannelConfig,
    Config,
    RepoConfig,
    repo_matches,
    schedule_problem,
)
from bot.store.chat_settings import ChatSettings, ChatSettingsStore
from bot.store.coordination import StoreUnavailable
from bot.week import DEFAULT_TIMEZONE, zone

log = logging.getLogger(__name__)

REFRESH_SECONDS = 2.0
"""How often a replica looks for other replicas' changes (one read of a revision)."""
CHAT_SETTINGS = ("lang", "schedule", "timezone")
"""The settings a chat gives as values (its repositories and topics are lists)."""

Origin = Literal["file", "chat", "both", "none"]
FollowRefusal = Literal["repo-not-allowed", "repo-private"]


def follow_refusal(config: Config, repo: str, *, private: bool) -> FollowRefusal | None:
    """Why a chat may not follow `repo` under `config`'s bounds, or None when it may: a
    repository must be under `[repos]` or match `chat.repos`; a private one (as GitHub
    says, or as `[repos]` marks it) must also match `chat.private_repos`."""
    name = config.configured_name(repo)
    if name is None and not repo_matches(config.chat.repos, repo):
        return "repo-not-allowed"
    if (private or (name is not None and config.repo(name).private)) and \
            not repo_matches(config.chat.private_repos, repo):
        return "repo-private"
    return None


def _valid_zone(name: str | None) -> bool:
    if not name:
        return False
    try:
        zone(name)
    except Exception:
        return False
    return True


def _chat_value(settings: ChatSettings, field: str) -> str | None:
    value: str | None = getattr(settings, field)
    if value is None:
        return None
    if field == "schedule" and schedule_problem(value) is not None:
        return None
    if field == "timezone" and not _valid_zone(value):
        return None
    return value


def _channel(platform: str, chat_id: str, repos: list[str], **settings: str) -> ChannelConfig:
    one = {"repo": repos[0]} if len(repos) == 1 else {"repos": tuple(repos)}
    return msgspec.convert({"platform": platform, "id": chat_id, **one, **settings},
                           ChannelConfig)


def effective_config(file: Config, chats: Mapping[str, ChatSettings]) -> Config:
    """`file` with the chats set up from chat as channels of its own, each within the
    file's bounds (see the module's docstring)."""
    allowed_chat_repos: dict[str, bool] = {}

    def allowed(settings: ChatSettings) -> list[str]:
        kept = []
        for repo in settings.repos:
            private = repo in settings.private
            if follow_refusal(file, repo, private=private) is None:
                kept.append(repo)
                if file.configured_name(repo) is None:
                    allowed_chat_repos[repo] = allowed_chat_repos.get(repo, False) or private
        return kept

    channels = list(file.channels)
    for chat, settings in sorted(chats.items()):
        platform, _, chat_id = chat.partition(":")
        if not chat_id:
            continue
        listed = next((i for i, c in enumerate(channels) if c.key == chat), None)
        if listed is None:
            repos = allowed(settings)
            if not repos:
                continue
            values = {field: value for field in CHAT_SETTINGS
                      if (value := _chat_value(settings, field)) is not None}
            values.setdefault("timezone", _repo_zone(file, repos[0]))
            channels.append(_channel(platform, chat_id, repos, **values))
        elif file.chat.file_channels == "chat":
            channels[listed] = _changed_file_channel(channels[listed], settings,
                                                     allowed(settings))
    every_repo = dict(file.repos)
    for repo, private in allowed_chat_repos.items():
        every_repo[repo] = RepoConfig(private=private)
    return msgspec.structs.replace(file, channels=tuple(channels), repos=every_repo)


def _repo_zone(file: Config, repo: str) -> str:
    name = file.configured_name(repo)
    return file.repo(name).timezone if name is not None else DEFAULT_TIMEZONE


def _changed_file_channel(channel: ChannelConfig, settings: ChatSettings,
                          repos: list[str]) -> ChannelConfig:
    """A file channel as chat changed it: the repositories chat added after the file's,
    and each value chat set while the file still says what it said then."""
    listed = {name.lower() for name in channel.repositories}
    added = [repo for repo in repos if repo.lower() not in listed]
    changes: dict[str, object] = {}
    for field in CHAT_SETTINGS:
        value = _chat_value(settings, field)
        if value is not None and settings.file_values.get(field) == getattr(channel, field):
            changes[field] = value
    if added:
        every = (*channel.repositories, *added)
        changes |= {"repo": "", "repos": every}
    return msgspec.structs.replace(channel, **changes) if changes else channel


def origin(file: Config, effective: Config, chat: str, settings: ChatSettings | None
           ) -> Origin:
    """Where a chat's settings come from: the file, chat, both (a file channel chat
    changed), or nowhere yet."""
    in_file = file.channel(chat) is not None
    if not in_file:
        return "chat" if effective.channel(chat) is not None else "none"
    changed = settings is not None and effective.channel(chat) != file.channel(chat)
    return "both" if changed else "file"


class LiveConfig:
    """The `ConfigView` of a running service (see the module's docstring).

    `store` holds the chats' own settings (None without Redis: only the file's
    channels); `clock` spaces the refreshes.
    """

    def __init__(self, file: Config, store: ChatSettingsStore | None = None, *,
                 refresh_seconds: float = REFRESH_SECONDS, clock: Clock = SYSTEM_CLOCK) -> None:
        self.store = store
        self.refresh_seconds = refresh_seconds
        self.clock = clock
        self._file = file
        self._chats: dict[str, ChatSettings] = {}
        self._revision: str | None = None
        self._current = effective_config(file, {})
        self._failing = False

    @property
    def current(self) -> Config:
        """The config in force: the file's, with the chats set up from chat."""
        return self._current

    @property
    def file(self) -> Config:
        """The config file as last loaded."""
        return self._file

    def chat_settings(self, chat: str) -> ChatSettings | None:
        """A chat's own settings as last read."""
        return self._chats.get(chat)

    def chats(self) -> dict[str, ChatSettings]:
        """Every chat's own settings as last read."""
        return dict(self._chats)

    def origin(self, chat: str) -> Origin:
        return origin(self._file, self._current, chat, self._chats.get(chat))

    def replace_file(self, file: Config) -> None:
        """A reloaded config file takes effect (chats' settings kept, bounds re-applied)."""
        self._file = file
        self._current = effective_config(file, self._chats)

    def changed(self, chat: str, settings: ChatSettings | None) -> None:
        """A change this process just stored (None: removed) takes effect here at once;
        the other replicas see it at their next refresh."""
        if settings is None:
            self._chats.pop(chat, None)
        else:
            self._chats[chat] = settings
        self._current = effective_config(self._file, self._chats)

    def read_chats(self) -> None:
        """Read every chat's settings now, in this thread (the CLI); a store that fails
        raises."""
        if self.store is not None:
            self._revision = self.store.revision()
            self._chats = self.store.all()
            self._current = effective_config(self._file, self._chats)

    async def refresh(self) -> Config:
        """The chats' settings read again when another replica changed them (one read
        of the store's revision when nothing did); a store that fails leaves the
        settings read last (logged once until it answers again)."""
        if self.store is None:
            return self._current
        store = self.store
        try:
            revision = await asyncio.to_thread(store.revision)
            if revision != self._revision:
                chats = await asyncio.to_thread(store.all)
                self._chats, self._revision = chats, revision
                self._current = effective_config(self._file, chats)
        except StoreUnavailable as exc:
            if not self._failing:
                log.warning("chat settings unreadable (%s); using those read last",
                            type(exc).__name__)
            self._failing = True
            return self._current
        if self._failing:
            log.info("chat settings readable again")
        self._failing = False
        return self._current

    async def keep_fresh(self, stop: asyncio.Event) -> None:
        """Refresh every `refresh_seconds` until `stop` is set (the service's task)."""
        while not stop.is_set():
            await self.refresh()
            await self.clock.wait(stop, self.refresh_seconds)


def restart_sections(before: Config, after: Config) -> list[str]:
    """The sections a reload changed that take effect at the next restart only: the
    listening socket's limits, the platforms' connections, the Redis and GitHub
    clients, the model."""
    sections = {"server": (before.server, after.server),
                "platforms": (before.platforms, after.platforms),
                "cache": (before.cache, after.cache), "github": (before.github, after.github),
                "llm": (before.llm, after.llm)}
    return [name for name, (was, now) in sections.items() if was != now]
_DESCRIBED = ("repositories", "lang", "schedule", "timezone", "topics", "admins", "style",
              "people", "notices", "notice_batch_minutes")


def describe_changes(before: Config, after: Config) -> str:
    """What a reload changed in the file's channels and repositories, for its log line:
    `slack:C1 schedule '0 9 * * MON' -> '0 10 * * FRI'; added telegram:-100; ...`."""
    parts: list[str] = []
    old = {c.key: c for c in before.channels}
    new = {c.key: c for c in after.channels}
    parts += [f"added {key}" for key in new if key not in old]
    parts += [f"removed {key}" for key in old if key not in new]
    for key in new.keys() & old.keys():
        for name in _DESCRIBED:
            was, now = getattr(old[key], name), getattr(new[key], name)
            if was != now:
                parts.append(f"{key} {name} {_shown(was)} -> {_shown(now)}")
    added = sorted(set(after.repos) - set(before.repos))
    removed = sorted(set(before.repos) - set(after.repos))
    parts += [f"repository {name} added" for name in added]
    parts += [f"repository {name} removed" for name in removed]
    parts += [f"repository {name} changed" for name in sorted(set(after.repos) & set(before.repos))
              if after.repos[name] != before.repos[name]]
    if before.chat != after.chat:
        parts.append("[chat] changed")
    return "; ".join(sorted(parts)) if parts else "nothing changed"


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return repr(value)
