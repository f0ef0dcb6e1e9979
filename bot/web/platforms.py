"""The chat platforms as the service sees them: which adapters the config and the
environment turn on, and what /healthz says of each (configured or not)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from starlette.routing import BaseRoute

from adapters.base import DeliveryError
from adapters.feishu_settings import credentials_present, feishu_status
from adapters.slack import SlackAdapter
from adapters.telegram import TelegramAdapter
from bot.config import ChannelConfig, Config
from bot.models import Digest, Reply
from bot.store.claims import Deduper

log = logging.getLogger(__name__)

PLATFORMS = ("slack", "telegram", "feishu")

class Adapter(Protocol):
    """What the server needs of a chat adapter (see `adapters.base.ChatAdapter`)."""

    async def start(self) -> None: ...
    def routes(self) -> list[BaseRoute]: ...
    def status(self) -> dict[str, Any]: ...
    async def send_reply(self, channel_id: str, reply: Reply) -> list[str]: ...
    async def post_digest(self, channel_id: str, digest: Digest) -> list[str]: ...
    async def close(self) -> None: ...

class AdapterNotices:
    """Merged-PR notices through the chat adapters (`bot.subscriptions.NoticeSender`)."""

    def __init__(self, adapters: Mapping[str, Adapter]) -> None:
        self.adapters = adapters

    def can_send(self, channel: ChannelConfig) -> bool:
        return channel.platform in self.adapters

    async def send(self, channel: ChannelConfig, reply: Reply) -> list[str]:
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            raise DeliveryError(f"{channel.platform} is not configured")
        return await adapter.send_reply(channel.id, reply)


def _unconfigured_status(config: Config, platform: str) -> dict[str, Any]:
    """What /healthz says about a platform without an adapter: the names of the
    environment variables it still needs, never values."""
    if platform == "slack":
        return {"platform": "slack", "configured": False,
                "missing_env": SlackAdapter.missing_settings(config)}
    if platform == "telegram":
        status = dict(TelegramAdapter.configured_status(config))
        status["missing_env"] = status.pop("missing", [])
        return status
    return dict(feishu_status(config), configured=False)


def _feishu_adapter(config: Config, handler: Any, deduper: Deduper,
                    **overrides: Any) -> Adapter | None:
    """Feishu's adapter, imported only for a bot with Feishu credentials: lark-oapi's
    import alone costs some 2.5 s and 130 MiB per process."""
    if not credentials_present(config):
        section = config.platforms.feishu
        log.info("feishu off: %s or %s is not set", section.app_id_env,
                 section.app_secret_env)
        return None
    from adapters.feishu import FeishuAdapter

    return FeishuAdapter.from_config(config, handler, deduper, **overrides)


def build_adapters(config: Config, handler_for: Callable[[str], Any], deduper: Deduper,
                   overrides: Mapping[str, Mapping[str, Any]] | None = None
                   ) -> dict[str, Adapter]:
    """Each platform's adapter whose secrets are set, answering through
    `handler_for(platform)`; `overrides[platform]` go to its `from_config` (tests)."""
    overrides = overrides or {}
    built: dict[str, Adapter] = {}
    for platform, factory in (("slack", SlackAdapter.from_config),
                              ("telegram", TelegramAdapter.from_config),
                              ("feishu", _feishu_adapter)):
        adapter = factory(config, handler_for(platform), deduper,
                          **dict(overrides.get(platform, {})))
        if adapter is not None:
            built[platform] = adapter
    return built


def platform_statuses(config: Config, adapters: Mapping[str, Adapter],
                      start_errors: Mapping[str, str]) -> dict[str, Any]:
    """/healthz's view of every platform: the adapter's own status, or the names of the
    variables an unconfigured one still needs."""
    statuses: dict[str, Any] = {}
    for platform in PLATFORMS:
        adapter = adapters.get(platform)
        if adapter is None:
            statuses[platform] = _unconfigured_status(config, platform)
            continue
        try:
            status = dict(adapter.status())
        except Exception as exc:
            status = {"platform": platform, "configured": True,
                      "error": type(exc).__name__}
        if platform in start_errors:
            status["start_error"] = start_errors[platform]
        statuses[platform] = status
    return statuses
