"""The chat platforms prdigest speaks: the only list of them.

Each spec is light to import - its name, whether the environment holds its secrets,
what /healthz says while it is off - and imports its adapter class (and so its SDK)
only when asked: lark-oapi alone costs seconds and ~130 MiB per process. The core
iterates `PLATFORMS`; it names no platform itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import adapters.feishu as feishu_package
import adapters.slack as slack_package
import adapters.telegram as telegram_package
from adapters.base import AdapterFactory, PayloadBuilder
from adapters.feishu import settings as feishu_settings
from adapters.slack import settings as slack_settings
from adapters.telegram import settings as telegram_settings
from bot.config import Config, PlatformSettings, load_config
from bot.extras import require
from bot.render.markup import Markup, markup_for

__all__ = ["LOCAL_PLATFORMS", "PLATFORMS", "PLATFORM_SCHEMAS", "PlatformSpec", "load_settings",
           "markup_of", "platform_spec"]


@dataclass(frozen=True, kw_only=True)
class PlatformSpec:
    """One chat platform, as the core knows it before its SDK is imported."""

    name: str
    # Its `[platforms.<name>]` table, read by `load_config` through `PLATFORM_SCHEMAS`.
    settings: type[PlatformSettings]
    # Names of the variables the configured mode needs that are not set: a platform
    # that says only that has credentials when none is missing, and /healthz without
    # its adapter names them.
    missing_env: Callable[[Config], list[str]] | None = None
    # Whether the secrets are set that make building the adapter worth trying, and
    # /healthz for the platform without an adapter (names of variables only), where a
    # platform says more than `missing_env`.
    credentials: Callable[[Config], bool] | None = None
    status_off: Callable[[Config], dict[str, Any]] | None = None
    # Names of the variables an outbound post needs that are not set (`prdigest post`).
    missing_post_env: Callable[[Config], list[str]]
    # Imports the adapter class: the SDK's import cost is paid here, on use.
    load: Callable[[], AdapterFactory]
    # Imports the module building the payloads the platform receives (previews).
    payloads: Callable[[], PayloadBuilder]
    # Imports the platform's markup: how GitHub text is escaped in its messages.
    markup: Callable[[], Markup]
    # Its templates and their catalogs, searched after the core's `templates/`.
    templates: Path
    # What a channel id of this platform looks like (the config `init` writes says).
    channel_id_hint: str
    # The extra that installs its SDK (`prdigest[<extra>]`) and the modules it brings.
    extra: str
    sdk: tuple[str, ...]

    def has_credentials(self, config: Config) -> bool:
        """Whether the secrets are set that make building the adapter worth trying."""
        if self.credentials is not None:
            return self.credentials(config)
        return not self._missing(config)

    def unconfigured_status(self, config: Config) -> dict[str, Any]:
        """/healthz for the platform without an adapter: names of missing variables only."""
        if self.status_off is not None:
            return self.status_off(config)
        return {"platform": self.name, "configured": False, "missing_env": self._missing(config)}

    def _missing(self, config: Config) -> list[str]:
        return self.missing_env(config) if self.missing_env is not None else []

    def __post_init__(self) -> None:
        if self.missing_env is None and (self.credentials is None or self.status_off is None):
            raise TypeError(f"{self.name}: a spec gives missing_env, or credentials and "
                            "status_off")

    def require(self) -> None:
        """`MissingExtra` (one line: the extra to install) without the platform's SDK."""
        require(self.extra, f"{self.name} (configured here)", self.sdk)

    def adapter(self) -> AdapterFactory:
        """Its adapter class; `MissingExtra` when its SDK is not installed."""
        self.require()
        return self.load()

    def payload_builder(self) -> PayloadBuilder:
        self.require()
        return self.payloads()

    def platform_markup(self) -> Markup:
        self.require()
        return self.markup()


def _slack() -> AdapterFactory:
    from adapters.slack.adapter import SlackAdapter

    return SlackAdapter


def _telegram() -> AdapterFactory:
    from adapters.telegram.adapter import TelegramAdapter

    return TelegramAdapter


def _feishu() -> AdapterFactory:
    from adapters.feishu.adapter import FeishuAdapter

    return FeishuAdapter


def _slack_markup() -> Markup:
    from adapters.slack.markup import SlackMarkup

    return SlackMarkup()


def _slack_payloads() -> PayloadBuilder:
    from adapters.slack import payloads

    return payloads


def _telegram_markup() -> Markup:
    from adapters.telegram.markup import TelegramMarkup

    return TelegramMarkup()


def _telegram_payloads() -> PayloadBuilder:
    from adapters.telegram import payloads

    return payloads


def _feishu_markup() -> Markup:
    from adapters.feishu.markup import FeishuMarkup

    return FeishuMarkup()


def _feishu_payloads() -> PayloadBuilder:
    from adapters.feishu import payloads

    return payloads


PLATFORMS: tuple[PlatformSpec, ...] = (
    PlatformSpec(name="slack", settings=slack_settings.SlackSettings,
                 missing_env=slack_settings.missing_env, load=_slack,
                 missing_post_env=slack_settings.missing_post_env,
                 payloads=_slack_payloads, markup=_slack_markup,
                 templates=slack_package.TEMPLATES,
                 channel_id_hint="a channel id such as C0123456",
                 extra="slack", sdk=("slack_bolt", "slack_sdk", "aiohttp")),
    PlatformSpec(name="telegram", settings=telegram_settings.TelegramSettings,
                 missing_env=telegram_settings.missing_env, load=_telegram,
                 missing_post_env=telegram_settings.missing_post_env,
                 payloads=_telegram_payloads, markup=_telegram_markup,
                 templates=telegram_package.TEMPLATES,
                 channel_id_hint="a chat id such as -1001234567890",
                 extra="telegram", sdk=("telegram", "aiohttp")),
    PlatformSpec(name="feishu", settings=feishu_settings.FeishuSettings,
                 credentials=feishu_settings.has_credentials,
                 status_off=feishu_settings.unconfigured_status, load=_feishu,
                 missing_post_env=feishu_settings.missing_post_env,
                 payloads=_feishu_payloads, markup=_feishu_markup,
                 templates=feishu_package.TEMPLATES,
                 channel_id_hint="a chat id such as oc_0123456789abcdef",
                 extra="feishu", sdk=("lark_oapi", "aiohttp")),
)

# Platforms a channel may name that the bot does not connect to: the console answers
# at the terminal (`prdigest ask`/`chat`), so nothing is ever posted there.
LOCAL_PLATFORMS: frozenset[str] = frozenset({"console"})


# Every platform a channel may name, with its settings (None: a local one has none).
PLATFORM_SCHEMAS: dict[str, type[PlatformSettings] | None] = {
    **{spec.name: spec.settings for spec in PLATFORMS}, **dict.fromkeys(LOCAL_PLATFORMS)}


def load_settings(path: Path | None) -> Config:
    """The config at `path`, every platform's channels and `[platforms.*]` table checked
    against the platform's own settings: what the composition roots load."""
    return load_config(path, platforms=PLATFORM_SCHEMAS)


def platform_spec(name: str) -> PlatformSpec | None:
    """The spec of a connected platform, or None for a local or unknown one."""
    return next((spec for spec in PLATFORMS if spec.name == name), None)


def markup_of(fmt: str) -> Markup:
    """The markup of a format: a platform's (`adapters/<platform>/markup.py`), else the
    core's (markdown, text, html)."""
    spec = platform_spec(fmt)
    return spec.platform_markup() if spec is not None else markup_for(fmt)
