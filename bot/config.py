"""One TOML file describes repositories, topics, channels and platforms.

Secrets never live in the file: it names the environment variables that hold them.
Loading has no side effects; every error names the field (`channels[1].schedule: ...`).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec
from croniter import croniter

from bot.errors import ConfigError
from bot.validation import describe
from bot.week import DEFAULT_TIMEZONE, zone

_T = TypeVar("_T")

Platform = Literal["slack", "telegram", "feishu", "console"]


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


class RepoConfig(Section, frozen=True, kw_only=True):
    timezone: str = DEFAULT_TIMEZONE
    topics: dict[str, TopicRule] = {}
    private: bool = False


class ChannelConfig(Section, frozen=True, kw_only=True):
    platform: Platform
    id: str
    repo: str
    lang: Literal["zh", "en"] = "zh"
    schedule: str = "0 9 * * MON"
    timezone: str = DEFAULT_TIMEZONE
    topics: tuple[str, ...] = ()
    admins: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """`slack:C0123` - how a channel is named in the ledger and on the CLI."""
        return f"{self.platform}:{self.id}"


class GitHubConfig(Section, frozen=True, kw_only=True):
    token_env: str = "GITHUB_TOKEN"
    api_url: str = "https://api.github.com"
    webhook_secret_env: str = "GITHUB_WEBHOOK_SECRET"
    poll_minutes: int = 5
    timeout_seconds: float = 15.0


class CacheConfig(Section, frozen=True, kw_only=True):
    url_env: str = "REDIS_URL"
    past_week_ttl_seconds: int = 30 * 24 * 3600
    current_week_ttl_seconds: int = 15 * 60


class ServerConfig(Section, frozen=True, kw_only=True):
    public_url: str = "http://localhost:8080"
    catch_up_hours: float = 12.0


class SlackConfig(Section, frozen=True, kw_only=True):
    bot_token_env: str = "SLACK_BOT_TOKEN"
    signing_secret_env: str = "SLACK_SIGNING_SECRET"
    app_token_env: str = "SLACK_APP_TOKEN"
    api_url: str = "https://slack.com/api/"
    socket_mode: bool = False


class TelegramConfig(Section, frozen=True, kw_only=True):
    bot_token_env: str = "TELEGRAM_BOT_TOKEN"
    secret_token_env: str = "TELEGRAM_WEBHOOK_SECRET"
    api_url: str = "https://api.telegram.org/bot"
    polling: bool = False


class FeishuConfig(Section, frozen=True, kw_only=True):
    app_id_env: str = "FEISHU_APP_ID"
    app_secret_env: str = "FEISHU_APP_SECRET"
    verification_token_env: str = "FEISHU_VERIFICATION_TOKEN"
    encrypt_key_env: str = "FEISHU_ENCRYPT_KEY"
    domain: str = "https://open.feishu.cn"
    long_connection: bool = False


class PlatformsConfig(Section, frozen=True, kw_only=True):
    slack: SlackConfig = SlackConfig()
    telegram: TelegramConfig = TelegramConfig()
    feishu: FeishuConfig = FeishuConfig()


class Config(Section, frozen=True, kw_only=True):
    repos: dict[str, RepoConfig] = {}
    channels: tuple[ChannelConfig, ...] = ()
    github: GitHubConfig = GitHubConfig()
    cache: CacheConfig = CacheConfig()
    server: ServerConfig = ServerConfig()
    platforms: PlatformsConfig = PlatformsConfig()

    def repo(self, name: str) -> RepoConfig:
        """The repository's settings; an unconfigured one gets the defaults."""
        return self.repos.get(name, RepoConfig())

    def channel(self, key: str) -> ChannelConfig | None:
        return next((c for c in self.channels if c.key == key), None)


def secret(env_name: str) -> str | None:
    """The value of the environment variable the config names, or None when unset."""
    value = os.environ.get(env_name, "")
    return value or None


def _check_repo_name(name: str, where: str) -> None:
    owner, _, repo = name.partition("/")
    if not owner or not repo or "/" in repo or name.strip() != name:
        raise ConfigError(f"{where}: repository must be written owner/name, got {name!r}")


def _validate(config: Config) -> None:
    for name, repo in config.repos.items():
        where = f"repos.{name!r}"
        _check_repo_name(name, where)
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
        _check_repo_name(channel.repo, f"{where}.repo")
        if channel.repo not in config.repos:
            raise ConfigError(f"{where}.repo: {channel.repo!r} is not under [repos]")
        try:
            zone(channel.timezone)
        except Exception:
            raise ConfigError(
                f"{where}.timezone: unknown time zone {channel.timezone!r}"
            ) from None
        if not croniter.is_valid(channel.schedule):
            raise ConfigError(f"{where}.schedule: not a cron expression: {channel.schedule!r}")
        pair = f"{channel.key} {channel.repo}"
        if pair in seen:
            raise ConfigError(f"{where}: channel {channel.key} is listed twice for {channel.repo}")
        seen.add(pair)
    if config.github.poll_minutes < 1:
        raise ConfigError("github.poll_minutes: must be at least 1")


def _convert(data: Any, kind: type[_T], where: str) -> _T:
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        raise ConfigError(describe(exc, where)) from None


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


def parse_config(data: dict[str, Any], *, source: str = "config") -> Config:
    """Validate a decoded TOML document into a `Config`."""
    try:
        repos_data = data.get("repos", {})
        if not isinstance(repos_data, dict):
            raise ConfigError("repos: expected a table")
        repos = {name: _convert_repo(name, entry) for name, entry in repos_data.items()}
        rest = {k: v for k, v in data.items() if k != "repos"}
        config = msgspec.structs.replace(_convert(rest, Config, ""), repos=repos)
        _validate(config)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return config


def load_config(path: Path | None) -> Config:
    """The config at `path`, or an empty one when no file is given."""
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
    return parse_config(data, source=str(path))
