"""One TOML file describes repositories, topics, channels and platforms (each platform's
settings are its adapter's: `PlatformSettings`).

Secrets never live in the file: it names the environment variables that hold them.
Loading has no side effects; every error names the field (`channels[1].schedule: ...`).
"""

from __future__ import annotations

import logging
import math
import os
import re
import tomllib
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, TypeVar

import msgspec
from croniter import croniter

from bot.config_fields import (
    check_channel_id,
    check_repo_name,
    check_repo_pattern,
    check_title_patterns,
    check_web_url,
)
from bot.errors import ConfigError
from bot.models import ChatForm, Style
from bot.validation import describe
from bot.week import DEFAULT_TIMEZONE, zone

_T = TypeVar("_T")
log = logging.getLogger(__name__)

class Section(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Config sections reject unknown fields, so a typo is an error, not a silent no-op."""


class TopicRule(Section, frozen=True, kw_only=True):
    keywords: tuple[str, ...] = ()
    title: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    label: str | None = None
    # Other names of the topic: a PR tagged `[ckpt]` counts as `checkpoint` with
    # `aliases = ["ckpt"]`, one bar instead of two.
    aliases: tuple[str, ...] = ()


class ExcludeRule(Section, frozen=True, kw_only=True):
    """PRs left out of digests, notices and trends: by author login (`*[bot]` matches
    every bot account), by label, or by a regular expression found in the title."""

    authors: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.authors or self.labels or self.titles)


class RepoConfig(Section, frozen=True, kw_only=True):
    timezone: str = DEFAULT_TIMEZONE
    topics: dict[str, TopicRule] = {}
    private: bool = False
    exclude: ExcludeRule = ExcludeRule()
    # Whether `[llm]` words this repository's digests: unset, public repositories are
    # narrated and private ones are not (their text would go to the model's provider).
    narrate: bool | None = None

    @property
    def narrated(self) -> bool:
        """Whether the narrator may send this repository's PR text to the model."""
        return self.narrate if self.narrate is not None else not self.private


NO_SCHEDULE = "off"
"""A channel's `schedule` when it gets no weekly post (answers and notices only)."""
DEFAULT_SCHEDULE = "0 9 * * MON"
"""A channel's weekly post unless it says otherwise: Mondays at 9:00 in its time zone."""


class ChannelConfig(Section, frozen=True, kw_only=True):
    platform: str
    id: str
    # One repository (`repo`) or several (`repos`), never both: several get one digest.
    repo: str = ""
    repos: tuple[str, ...] = ()
    lang: Literal["zh", "en"] = "zh"
    schedule: str = DEFAULT_SCHEDULE
    timezone: str = DEFAULT_TIMEZONE
    topics: tuple[str, ...] = ()
    admins: tuple[str, ...] = ()
    exclude: ExcludeRule = ExcludeRule()
    # `compact`: a few lines per section, at most about 800 characters, report link first.
    style: Style = "full"
    # Whether the chat digest adds the People line (the full report always has it).
    people: bool = False

    @property
    def chat_form(self) -> ChatForm:
        """How this channel's digests are shown in chat."""
        return ChatForm(style=self.style, people=self.people)

    # Merged-PR notices: top-level posts, or replies under the week's digest message.
    notices: Literal["channel", "thread"] = "channel"
    # Merges within this many minutes of the first one are announced in one message.
    notice_batch_minutes: int = 0

    @property
    def key(self) -> str:
        """`slack:C0123` - how a channel is named in the ledger and on the CLI."""
        return f"{self.platform}:{self.id}"

    @property
    def weekly(self) -> bool:
        """Whether the channel gets a weekly post (its `schedule` is not "off")."""
        return self.schedule != NO_SCHEDULE

    @property
    def repositories(self) -> tuple[str, ...]:
        """The repositories the channel follows, in the order the config lists them."""
        return self.repos or (self.repo,)

    @property
    def scope(self) -> str:
        """What the channel's digests cover, as its ledger and logs name it: the
        repository, or the listed repositories joined by ", "."""
        return ", ".join(self.repositories)

    def pull_scope(self, repo: str) -> tuple[tuple[str, str], ...]:
        """The reply parameter that writes `repo`'s PRs `org/a#12` in this channel: set
        where the channel follows several repositories, none where it follows one."""
        return (("scope", repo),) if len(self.repositories) > 1 else ()

    def follows(self, repo: str) -> bool:
        """Whether `repo` is one of the channel's repositories (names ignore case)."""
        return repo.lower() in (name.lower() for name in self.repositories)


def repo_matches(patterns: tuple[str, ...], repo: str) -> bool:
    """Whether `repo` is one of `patterns`: `owner/name`, `owner/*` (every repository of
    the owner) or `*/*` (any); names ignore case, as GitHub's do."""
    owner, _, name = repo.lower().partition("/")
    for pattern in patterns:
        p_owner, _, p_name = pattern.lower().partition("/")
        if p_owner in ("*", owner) and p_name in ("*", name):
            return True
    return False


class ChatConfig(Section, frozen=True, kw_only=True):
    """`[chat]`: what a chat may set up for itself (`follow owner/repo`, `schedule`,
    `lang`, `timezone`, `topics`) and who may change it.

    `repos`: the repositories chats may follow besides those under `[repos]`
    (`owner/name`, `owner/*`, `*/*`); `private_repos`: the private ones among them
    (a private repository not listed here is never followed from chat).
    `changes_by`: who may change a chat's settings - `chat-admins` (the chat's admins
    on its platform; in a direct conversation, its user), `listed` (only `admins`) or
    `anyone`; `admins` (`platform:user`) may always. `file_channels`: whether chat may
    change a channel this file lists (`chat`), where a setting the file changes later
    wins again, or not (`file`). `max_channels`: chats set up from chat, at most (0: none).
    `pending_minutes`: how long the PRs waiting for review are kept per chat."""

    repos: tuple[str, ...] = ()
    private_repos: tuple[str, ...] = ()
    changes_by: Literal["chat-admins", "listed", "anyone"] = "chat-admins"
    admins: tuple[str, ...] = ()
    file_channels: Literal["file", "chat"] = "file"
    max_channels: int = 1000
    pending_minutes: int = 10

    def listed_admin(self, platform: str, user: str | None) -> bool:
        """Whether `user` of `platform` is one of `admins`."""
        return user is not None and f"{platform}:{user}" in self.admins


class GitHubConfig(Section, frozen=True, kw_only=True):
    token_env: str = "GITHUB_TOKEN"
    # More tokens, by the variables holding them: each is a credential of the pool
    # (`bot.github.pool`) with its own hourly points.
    token_envs: tuple[str, ...] = ()
    api_url: str = "https://api.github.com"
    webhook_secret_env: str = "GITHUB_WEBHOOK_SECRET"
    poll_minutes: int = 5
    # With a webhook secret set, the poller still runs this often to announce merges no
    # delivery brought (0: never).
    reconcile_minutes: int = 30
    # Repositories the poller asks GitHub about at once.
    poll_concurrency: int = 4
    timeout_seconds: float = 15.0


class CacheConfig(Section, frozen=True, kw_only=True):
    url_env: str = "REDIS_URL"
    past_week_ttl_seconds: int = 30 * 24 * 3600
    current_week_ttl_seconds: int = 15 * 60
    # A Redis that may evict prdigest's keys, or keeps nothing across a restart: warn at
    # start, or refuse to serve on it (`bot.store.redis.safety`).
    unsafe_redis: Literal["warn", "refuse"] = "warn"


class ServerConfig(Section, frozen=True, kw_only=True):
    """`[server]`. The connection limits bound what slow or idle clients can hold
    (open sockets, half-sent requests); see docs/deployment.md, "Behind a reverse proxy"."""

    # Where users reach the service; unset, chat digests say where their full report is
    # served instead of linking to it.
    public_url: str | None = None
    catch_up_hours: float = 12.0
    read_timeout_seconds: float = 15.0
    keep_alive_seconds: int = 5
    max_connections: int = 500
    # Connections one address may hold (a trusted proxy's count toward max_connections).
    max_connections_per_client: int = 50
    max_header_bytes: int = 16 * 1024
    report_requests_per_minute: int = 60
    # GitHub points the report pages may spend an hour, all visitors together (0: pages
    # are served from the cache only); cached pages cost nothing.
    report_points_per_hour: int = 1000
    # Hours before a channel's posting minute in which its finished week is fetched
    # ahead, spread out (0: fetched at the posting minute).
    prefetch_hours: float = 6.0


class PlatformSettings(Section, frozen=True, kw_only=True):
    """A chat platform's `[platforms.<name>]` table. Each platform declares its own, with
    its adapter (`adapters/<platform>/settings.py`), and the registry hands them to
    `load_config`; the core knows them only as this. `URLS`: the fields that hold an
    address the service calls, each with an example for the error."""

    URLS: ClassVar[dict[str, str]] = {}

    def check(self, where: str) -> None:
        """Raise a `ConfigError` naming the field under `where` for a value the type
        allows but the platform does not."""


PlatformSchemas = Mapping[str, type[PlatformSettings] | None]
"""The platforms a config may name: each one's settings table, or None for a platform
without settings (one that answers at the terminal)."""

_S = TypeVar("_S", bound=PlatformSettings)


class LLMConfig(Section, frozen=True, kw_only=True):
    """`[llm]`: an OpenAI-compatible endpoint that words the digest (off when absent).

    `response_format`: `json_schema` sends the answer's JSON Schema; `json_object_schema`
    sends it inside JSON mode (`{"type": "json_object", "schema": ...}`, llama.cpp-based
    servers); `json_object` is for endpoints that only take JSON mode (DeepSeek,
    Moonshot, Zhipu, most of DashScope).
    `timeout_seconds` bounds one call, `budget_seconds` one digest's narration (shared by
    the repositories of a combined digest); `extra_body` goes into every request as is
    (provider switches such as `enable_thinking = false`). `check = "model"` adds a
    second pass that asks the model whether each kept sentence is supported.
    """

    base_url: str
    model: str
    api_key_env: str = "PRDIGEST_LLM_API_KEY"
    response_format: Literal["json_schema", "json_object_schema", "json_object"] = "json_schema"
    timeout_seconds: float = 60.0
    budget_seconds: float = 120.0
    max_concurrency: int = 4
    check: Literal["rules", "model"] = "rules"
    extra_body: dict[str, Any] = {}


class Config(Section, frozen=True, kw_only=True):
    repos: dict[str, RepoConfig] = {}
    channels: tuple[ChannelConfig, ...] = ()
    github: GitHubConfig = GitHubConfig()
    cache: CacheConfig = CacheConfig()
    server: ServerConfig = ServerConfig()
    # Each platform's table as written: `platform_settings` reads it as its settings.
    platforms: dict[str, dict[str, Any]] = {}
    llm: LLMConfig | None = None
    chat: ChatConfig = ChatConfig()

    @property
    def current(self) -> Config:
        """The config in force: this one, which never changes (see `ConfigView`)."""
        return self

    def repo(self, name: str) -> RepoConfig:
        """The repository's settings; an unconfigured one gets the defaults."""
        return self.repos.get(name, RepoConfig())

    def channel(self, key: str) -> ChannelConfig | None:
        return next((c for c in self.channels if c.key == key), None)

    def configured_name(self, repo: str) -> str | None:
        """The spelling `[repos]` gives `repo` (GitHub's names ignore case), or None."""
        lowered = repo.lower()
        return next((name for name in self.repos if name.lower() == lowered), None)


class ConfigView(Protocol):
    """Where a long-lived part of the service reads the config in force: a `Config`
    (which never changes), or the service's live one (`bot.live.LiveConfig`: the file
    as last loaded, with the chats set up from chat), which a reload and a chat's
    `follow` change while the part runs."""

    @property
    def current(self) -> Config: ...


DAY_SECONDS = 24 * 3600
NOTICE_BATCH_MAX_MINUTES = 24 * 60
"""A batch of notices waits at most a day: longer, and a merge is no longer news."""
NUMBER_RANGES: tuple[tuple[str, str, float, float], ...] = (
    ("github", "poll_minutes", 1, 7 * 24 * 60),
    ("github", "reconcile_minutes", 0, 7 * 24 * 60),
    ("github", "poll_concurrency", 1, 10),
    ("github", "timeout_seconds", 0.1, 600),
    ("cache", "past_week_ttl_seconds", 1, 366 * DAY_SECONDS),
    ("cache", "current_week_ttl_seconds", 1, 7 * DAY_SECONDS),
    ("server", "catch_up_hours", 0.05, 7 * 24),
    ("server", "read_timeout_seconds", 0.5, 600),
    ("server", "keep_alive_seconds", 1, 600),
    ("server", "max_connections", 1, 65_536),
    ("server", "max_connections_per_client", 1, 65_536),
    ("server", "max_header_bytes", 1024, 1 << 20),
    ("server", "report_requests_per_minute", 1, 100_000),
    ("server", "report_points_per_hour", 0, 1_000_000),
    ("server", "prefetch_hours", 0, 7 * 24),
    ("chat", "max_channels", 0, 100_000),
    ("chat", "pending_minutes", 1, 24 * 60),
)
"""(section, field, least, most) of every number in the file: a week of catch-up or
polling, a year of caching, ten minutes for one GitHub request. Beyond them a value is a
mistake (`inf`, `nan`, a negative catch-up that would post nothing, a TTL Redis
refuses), reported by name. Connections: at most as many as a process may open files,
a request head of 1 KiB to 1 MiB, up to ten minutes to send a request. The poller asks
about at most 10 repositories at once: the HTTP client keeps 10 connections, and GitHub
asks for few concurrent requests (its secondary limits)."""


def secret(env_name: str) -> str | None:
    """The value of the environment variable the config names, or None when unset."""
    value = os.environ.get(env_name, "")
    return value or None


class Secrets:
    """A record of secret values read with `secret` (a platform's tokens): its `repr`
    names the record only, so no log line or traceback shows a value. A dataclass of
    them says `repr=False`."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(...)"


def _check_channel_repos(channel: ChannelConfig, config: Config, where: str) -> None:
    """A channel names one repository (`repo`) or a list of them (`repos`), each
    configured under [repos] and listed once."""
    if channel.repo and channel.repos:
        raise ConfigError(f"{where}.repos: give repo or repos, not both")
    if not channel.repo and not channel.repos:
        raise ConfigError(f"{where}.repo: missing (give repo, or repos for several)")
    seen: set[str] = set()
    for position, name in enumerate(channel.repositories):
        at = f"{where}.repos[{position}]" if channel.repos else f"{where}.repo"
        check_repo_name(name, at)
        if name.lower() in seen:  # GitHub's names ignore case: ACME/x is acme/x
            raise ConfigError(f"{at}: {name!r} is listed twice")
        if name not in config.repos:
            raise ConfigError(f"{at}: {name!r} is not under [repos]")
        seen.add(name.lower())


def _validate(config: Config, platforms: PlatformSchemas | None) -> None:
    for name, repo in config.repos.items():
        where = f"repos.{name!r}"
        check_repo_name(name, where)
        check_title_patterns(repo.exclude.titles, where)
        try:
            zone(repo.timezone)
        except Exception:
            raise ConfigError(f"{where}.timezone: unknown time zone {repo.timezone!r}") from None
        for topic, rule in repo.topics.items():
            if not (rule.keywords or rule.title or rule.paths):
                raise ConfigError(
                    f"{where}.topics.{topic}: give keywords, title or paths"
                )
    seen: set[str] = set()
    for index, channel in enumerate(config.channels):
        where = f"channels[{index}]"
        check_channel_id(channel.id, where)
        _check_channel_repos(channel, config, where)
        check_title_patterns(channel.exclude.titles, where)
        try:
            zone(channel.timezone)
        except Exception:
            raise ConfigError(
                f"{where}.timezone: unknown time zone {channel.timezone!r}"
            ) from None
        problem = schedule_problem(channel.schedule)
        if problem is not None:
            raise ConfigError(f"{where}.schedule: {problem}")
        if not 0 <= channel.notice_batch_minutes <= NOTICE_BATCH_MAX_MINUTES:
            raise ConfigError(f"{where}.notice_batch_minutes: must be a whole number of "
                              f"minutes from 0 (off) to {NOTICE_BATCH_MAX_MINUTES}, got "
                              f"{channel.notice_batch_minutes!r}")
        for name in channel.repositories:
            pair = f"{channel.key} {name}"
            if pair in seen:
                raise ConfigError(f"{where}: channel {channel.key} is listed twice for {name}")
            seen.add(pair)
    _check_numbers(config)
    _check_chat(config.chat)
    _check_web_urls(config)
    _check_token_envs(config.github)
    if platforms is not None:
        _check_platforms(config, platforms)
    if config.llm is not None:
        _validate_llm(config.llm)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_token_envs(github: GitHubConfig) -> None:
    """The pool's token variables: names of variables, each once, never `token_env`."""
    seen = {github.token_env}
    for index, name in enumerate(github.token_envs):
        where = f"github.token_envs[{index}]"
        if not _ENV_NAME.fullmatch(name):
            raise ConfigError(f"{where}: expected the name of an environment variable such "
                              f"as GITHUB_TOKEN_2, got {name!r}")
        if name in seen:
            raise ConfigError(f"{where}: {name} is named twice (github.token_env and "
                              "github.token_envs name each variable once)")
        seen.add(name)


def schedule_problem(schedule: str) -> str | None:
    """What is wrong with a channel's `schedule`, or None: a cron expression that fires in
    every year, or "off"."""
    if schedule == NO_SCHEDULE:
        return None
    if not croniter.is_valid(schedule):
        return f"not a cron expression: {schedule!r}"
    if not fires_every_year(schedule):
        return (f"{schedule!r} does not fire in every year (a date such as 30 February "
                "never comes)")
    return None


def _check_chat(chat: ChatConfig) -> None:
    for field, patterns in (("repos", chat.repos), ("private_repos", chat.private_repos)):
        for index, pattern in enumerate(patterns):
            check_repo_pattern(pattern, f"chat.{field}[{index}]")
    for index, admin in enumerate(chat.admins):
        platform, _, user = admin.partition(":")
        if not platform or not user.strip() or user.strip() != user:
            raise ConfigError(f"chat.admins[{index}]: write a user as platform:id (the name of "
                              f"its platform, a colon, its user id), got {admin!r}")


def _validate_llm(llm: LLMConfig) -> None:
    check_web_url("llm.base_url", llm.base_url, "https://api.openai.com/v1")
    if not llm.model.strip():
        raise ConfigError("llm.model: must name a model")
    if not llm.api_key_env.strip():
        raise ConfigError("llm.api_key_env: must name an environment variable")
    if not (math.isfinite(llm.timeout_seconds) and 0 < llm.timeout_seconds <= 600):
        raise ConfigError(f"llm.timeout_seconds: must be between 0 and 600 seconds, got "
                          f"{_number(llm.timeout_seconds)}")
    if not (math.isfinite(llm.budget_seconds) and 0 < llm.budget_seconds <= 3600):
        raise ConfigError(f"llm.budget_seconds: must be between 0 and 3600 seconds, got "
                          f"{_number(llm.budget_seconds)}")
    if not 1 <= llm.max_concurrency <= 64:
        raise ConfigError(f"llm.max_concurrency: must be between 1 and 64, got "
                          f"{llm.max_concurrency!r}")


def _check_web_urls(config: Config) -> None:
    """Every address the service calls or links to is an http(s) URL with a host,
    checked at load: a typo found at the first GitHub fetch would stop the service hours
    after it started. Chat digests link to report pages under `server.public_url`, and
    a platform may register its webhook there. A platform's own addresses are its
    settings' `URLS`."""
    for field, value, example in (
        ("server.public_url", config.server.public_url, "https://bot.example.com"),
        ("github.api_url", config.github.api_url, "https://api.github.com"),
    ):
        if value is not None:  # an unset public_url links nothing
            check_web_url(field, value, example)


def _check_platforms(config: Config, platforms: PlatformSchemas) -> None:
    """Each channel names a known platform; each `[platforms.<name>]` table is a known
    platform's settings, read as its settings say (types, addresses, its own checks)."""
    names = ", ".join(sorted(platforms))
    for index, channel in enumerate(config.channels):
        if channel.platform not in platforms:
            raise ConfigError(f"channels[{index}].platform: unknown platform "
                              f"{channel.platform!r} (one of {names})")
    for name, table in config.platforms.items():
        schema = platforms.get(name)
        if schema is None:
            known = ", ".join(sorted(n for n, s in platforms.items() if s is not None))
            raise ConfigError(f"platforms.{name}: no such platform (one of {known})")
        where = f"platforms.{name}"
        settings = _convert(table, schema, where)
        for field, example in schema.URLS.items():
            check_web_url(f"{where}.{field}", getattr(settings, field), example)
        settings.check(where)


def platform_settings(config: Config, name: str, schema: type[_S]) -> _S:
    """The `[platforms.<name>]` table of `config` as `schema` (its defaults where the
    table is absent); a bad value is a `ConfigError` naming its field."""
    return _convert(config.platforms.get(name, {}), schema, f"platforms.{name}")


def fires_every_year(schedule: str) -> bool:
    """Whether a valid cron fires at least once in each year of a leap-year cycle: one
    that never fires (`0 9 30 2 *`), or only on 29 February, would leave its channel
    without a digest for years."""
    for year in range(2024, 2028):
        try:
            # get_next excludes its start: start a second before the year.
            start = datetime(year - 1, 12, 31, 23, 59, 59)
            fired: datetime = croniter(schedule, start).get_next(datetime)
        except Exception:  # croniter's "failed to find next date", or worse
            return False
        if fired.year != year:
            return False
    return True


def _check_numbers(config: Config) -> None:
    for section, name, least, most in NUMBER_RANGES:
        value = getattr(getattr(config, section), name)
        if not (math.isfinite(value) and least <= value <= most):
            raise ConfigError(f"{section}.{name}: must be a number from {_number(least)} "
                              f"to {_number(most)}, got {value!r}")


def _number(bound: float) -> str:
    """A range's bound as written in the file: `1048576`, `0.05`."""
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


def _convert(data: Any, kind: type[_T], where: str) -> _T:
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        raise ConfigError(describe(exc, where, kind)) from None


def _convert_repo(name: str, data: Any) -> RepoConfig:
    """Repos and topics are tables keyed by name, so convert them one by one to keep
    the name in the error path."""
    where = f"repos.{name!r}"
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table")
    topics = data.get("topics", {})
    if not isinstance(topics, dict):
        raise ConfigError(f"{where}.topics: expected a table")
    rules = {
        topic: _convert(rule, TopicRule, f"{where}.topics.{topic}")
        for topic, rule in topics.items()
    }
    rest = {k: v for k, v in data.items() if k != "topics"}
    return msgspec.structs.replace(_convert(rest, RepoConfig, where), topics=rules)


RENAMED: dict[str, dict[str, str]] = {
    "llm": {"timeout_s": "timeout_seconds", "budget_s": "budget_seconds"},
}
"""Keys spelled another way before (section -> old -> new): still read, with a warning."""


def _renamed(data: dict[str, Any], source: str) -> dict[str, Any]:
    """`data` with the old spellings of `RENAMED` under their names now."""
    out = dict(data)
    for section, names in RENAMED.items():
        table = out.get(section)
        if not isinstance(table, dict):
            continue
        table = dict(table)
        for old, new in names.items():
            if old not in table:
                continue
            if new in table:
                raise ConfigError(f"{section}.{old}: give {section}.{new} only (the same "
                                  "setting spelled two ways)")
            log.warning("%s: %s.%s is now spelled %s.%s; the old name still works",
                        source, section, old, section, new)
            table[new] = table.pop(old)
        out[section] = table
    return out


def parse_config(data: dict[str, Any], *, source: str = "config",
                 platforms: PlatformSchemas | None = None) -> Config:
    """Validate a decoded TOML document into a `Config`. With `platforms` (the
    registry's), the channels' platforms and the `[platforms.*]` tables are checked too;
    without, those tables are kept as written for their platforms to read."""
    try:
        data = _renamed(data, source)
        repos_data = data.get("repos", {})
        if not isinstance(repos_data, dict):
            raise ConfigError("repos: expected a table")
        repos = {name: _convert_repo(name, entry) for name, entry in repos_data.items()}
        rest = {k: v for k, v in data.items() if k != "repos"}
        config = msgspec.structs.replace(_convert(rest, Config, ""), repos=repos)
        _validate(config, platforms)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return config


def load_config(path: Path | None, *, platforms: PlatformSchemas | None = None) -> Config:
    """The config at `path`, or an empty one when no file is given (`platforms`: see
    `parse_config`)."""
    if path is None:
        return Config()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    return parse_config(data, source=str(path), platforms=platforms)
