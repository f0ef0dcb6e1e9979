"""What the config and environment say about Telegram, without importing PTB."""

from __future__ import annotations

from typing import Any, ClassVar

from bot.config import Config, PlatformSettings, platform_settings, secret

__all__ = [
    "TelegramSettings", "has_credentials", "missing_env", "missing_post_env", "telegram_settings",
    "unconfigured_status"
]


class TelegramSettings(PlatformSettings, frozen=True, kw_only=True):
    """`[platforms.telegram]`: the variables holding its secrets, its Bot API, and long
    polling instead of the webhook."""

    URLS: ClassVar[dict[str, str]] = {"api_url": "https://api.telegram.org/bot"}

    bot_token_env: str = "TELEGRAM_BOT_TOKEN"
    secret_token_env: str = "TELEGRAM_WEBHOOK_SECRET"
    api_url: str = "https://api.telegram.org/bot"
    polling: bool = False


def telegram_settings(config: Config) -> TelegramSettings:
    """The config's `[platforms.telegram]`, its defaults where absent."""
    return platform_settings(config, "telegram", TelegramSettings)


def missing_env(config: Config) -> list[str]:
    """The environment variables (names only) Telegram still needs: the bot token, and
    in webhook mode the secret token Telegram sends back."""
    section = telegram_settings(config)
    needed = [section.bot_token_env] + ([] if section.polling else [section.secret_token_env])
    return [name for name in needed if secret(name) is None]


def missing_post_env(config: Config) -> list[str]:
    """What posting a message needs and is not set: the bot token only."""
    name = telegram_settings(config).bot_token_env
    return [] if secret(name) else [name]


def has_credentials(config: Config) -> bool:
    """Every secret the configured mode needs is set."""
    return not missing_env(config)


def unconfigured_status(config: Config) -> dict[str, Any]:
    """/healthz for Telegram without an adapter: the names of the variables still needed."""
    return {"platform": "telegram", "configured": False, "missing_env": missing_env(config)}
