"""The chat platforms as the service sees them: which adapters the config and the
environment turn on, and what /healthz says of each (configured or not). Platforms
come from `adapters.registry`; nothing here names one."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from adapters.base import ChatAdapter, DeliveryError
from adapters.registry import PLATFORMS
from bot.chat.inbound import CommandAnswering, FirstSeen
from bot.config import ChannelConfig, Config
from bot.models import Reply

log = logging.getLogger(__name__)

# What the server needs of a chat adapter: the one contract.
Adapter = ChatAdapter


class AdapterNotices:
    """Merged-PR notices through the chat adapters (`bot.subscriptions.NoticeSender`)."""

    def __init__(self, adapters: Mapping[str, ChatAdapter]) -> None:
        self.adapters = adapters

    def can_send(self, channel: ChannelConfig) -> bool:
        return channel.platform in self.adapters

    async def send(self, channel: ChannelConfig, reply: Reply) -> list[str]:
        adapter = self.adapters.get(channel.platform)
        if adapter is None:
            raise DeliveryError(f"{channel.platform} is not configured")
        return await adapter.send_reply(channel.id, reply)


def build_adapters(config: Config, handler_for: Callable[[str], CommandAnswering],
                   deduper: FirstSeen,
                   overrides: Mapping[str, Mapping[str, Any]] | None = None
                   ) -> dict[str, ChatAdapter]:
    """Each registered platform's adapter whose secrets are set, answering through
    `handler_for(platform)`; `overrides[platform]` go to its `from_config` (tests).
    A platform without credentials is not even imported."""
    overrides = overrides or {}
    built: dict[str, ChatAdapter] = {}
    for spec in PLATFORMS:
        if not spec.has_credentials(config):
            missing = spec.unconfigured_status(config).get("missing_env") or []
            log.info("%s off: %s not set", spec.name, ", ".join(missing) or "credentials")
            continue
        adapter = spec.load().from_config(config, handler_for(spec.name), deduper,
                                          **dict(overrides.get(spec.name, {})))
        if adapter is not None:
            built[spec.name] = adapter
    return built


def platform_statuses(config: Config, adapters: Mapping[str, ChatAdapter],
                      start_errors: Mapping[str, str]) -> dict[str, Any]:
    """/healthz's view of every platform: the adapter's own status, or the names of the
    variables an unconfigured one still needs."""
    statuses: dict[str, Any] = {}
    for spec in PLATFORMS:
        adapter = adapters.get(spec.name)
        if adapter is None:
            statuses[spec.name] = spec.unconfigured_status(config)
            continue
        try:
            status = dict(adapter.status())
        except Exception as exc:
            status = {"platform": spec.name, "configured": True,
                      "error": type(exc).__name__}
        if spec.name in start_errors:
            status["start_error"] = start_errors[spec.name]
        statuses[spec.name] = status
    return statuses
