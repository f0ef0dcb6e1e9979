"""The chat platforms prdigest speaks: the only list of them.

Each spec is light to import - its name, whether the environment holds its secrets,
what /healthz says while it is off - and imports its adapter class (and so its SDK)
only when asked: lark-oapi alone costs seconds and ~130 MiB per process. The core
iterates `PLATFORMS`; it names no platform itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from adapters.base import AdapterFactory, PayloadBuilder
from adapters.feishu import settings as feishu_settings
from adapters.slack import settings as slack_settings
from adapters.telegram import settings as telegram_settings
from bot.config import Config

__all__ = ["LOCAL_PLATFORMS", "PLATFORMS", "PlatformSpec", "platform_spec"]


@dataclass(frozen=True, kw_only=True)
class PlatformSpec:
    """One chat platform, as the core knows it before its SDK is imported."""

    name: str
    # Whether the secrets are set that make building the adapter worth trying.
    has_credentials: Callable[[Config], bool]
    # /healthz for the platform without an adapter: names of missing variables only.
    unconfigured_status: Callable[[Config], dict[str, Any]]
    # Names of the variables an outbound post needs that are not set (`prdigest post`).
    missing_post_env: Callable[[Config], list[str]]
    # Imports the adapter class: the SDK's import cost is paid here, on use.
    load: Callable[[], AdapterFactory]
    # Imports the module building the payloads the platform receives (previews).
    payloads: Callable[[], PayloadBuilder]


def _slack() -> AdapterFactory:
    from adapters.slack.adapter import SlackAdapter

    return SlackAdapter


def _telegram() -> AdapterFactory:
    from adapters.telegram.adapter import TelegramAdapter

    return TelegramAdapter


def _feishu() -> AdapterFactory:
    from adapters.feishu.adapter import FeishuAdapter

    return FeishuAdapter


def _slack_payloads() -> PayloadBuilder:
    from adapters.slack import payloads

    return payloads


def _telegram_payloads() -> PayloadBuilder:
    from adapters.telegram import payloads

    return payloads


def _feishu_payloads() -> PayloadBuilder:
    from adapters.feishu import payloads

    return payloads


PLATFORMS: tuple[PlatformSpec, ...] = (
    PlatformSpec(name="slack", has_credentials=slack_settings.has_credentials,
                 unconfigured_status=slack_settings.unconfigured_status, load=_slack,
                 missing_post_env=slack_settings.missing_post_env,
                 payloads=_slack_payloads),
    PlatformSpec(name="telegram", has_credentials=telegram_settings.has_credentials,
                 unconfigured_status=telegram_settings.unconfigured_status, load=_telegram,
                 missing_post_env=telegram_settings.missing_post_env,
                 payloads=_telegram_payloads),
    PlatformSpec(name="feishu", has_credentials=feishu_settings.has_credentials,
                 unconfigured_status=feishu_settings.unconfigured_status, load=_feishu,
                 missing_post_env=feishu_settings.missing_post_env,
                 payloads=_feishu_payloads),
)

# Platforms a channel may name that the bot does not connect to: the console answers
# at the terminal (`prdigest ask`/`chat`), so nothing is ever posted there.
LOCAL_PLATFORMS: frozenset[str] = frozenset({"console"})


def platform_spec(name: str) -> PlatformSpec | None:
    """The spec of a connected platform, or None for a local or unknown one."""
    return next((spec for spec in PLATFORMS if spec.name == name), None)
