"""What the config and environment say about Slack, without importing Bolt."""

from __future__ import annotations

from typing import Any

from bot.config import Config, secret

__all__ = ["has_credentials", "missing_env", "missing_post_env", "unconfigured_status"]


def missing_env(config: Config) -> list[str]:
    """The environment variables (names only) Slack still needs: the bot token, and the
    app-level token in Socket Mode or the signing secret over HTTP."""
    settings = config.platforms.slack
    needed = [settings.bot_token_env]
    needed.append(settings.app_token_env if settings.socket_mode
                  else settings.signing_secret_env)
    return [name for name in needed if not secret(name)]


def missing_post_env(config: Config) -> list[str]:
    """What posting a message needs and is not set: the bot token only."""
    name = config.platforms.slack.bot_token_env
    return [] if secret(name) else [name]


def has_credentials(config: Config) -> bool:
    """Every secret the configured mode needs is set."""
    return not missing_env(config)


def unconfigured_status(config: Config) -> dict[str, Any]:
    """/healthz for Slack without an adapter: the names of the variables still needed."""
    return {"platform": "slack", "configured": False, "missing_env": missing_env(config)}
