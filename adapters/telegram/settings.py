"""What the config and environment say about Telegram, without importing PTB."""

from __future__ import annotations

from typing import Any

from bot.config import Config, secret

__all__ = ["has_credentials", "missing_env", "missing_post_env", "unconfigured_status"]


def missing_env(config: Config) -> list[str]:
    """The environment variables (names only) Telegram still needs: the bot token, and
    in webhook mode the secret token Telegram sends back."""
    section = config.platforms.telegram
    needed = [section.bot_token_env] + ([] if section.polling else [section.secret_token_env])
    return [name for name in needed if secret(name) is None]


def missing_post_env(config: Config) -> list[str]:
    """What posting a message needs and is not set: the bot token only."""
    name = config.platforms.telegram.bot_token_env
    return [] if secret(name) else [name]


def has_credentials(config: Config) -> bool:
    """Every secret the configured mode needs is set."""
    return not missing_env(config)


def unconfigured_status(config: Config) -> dict[str, Any]:
    """/healthz for Telegram without an adapter: the names of the variables still needed."""
    return {"platform": "telegram", "configured": False, "missing_env": missing_env(config)}
