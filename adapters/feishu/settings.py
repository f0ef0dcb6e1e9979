"""What the config and environment say about Feishu, without importing lark-oapi.

lark-oapi loads every Open API service when imported (about 2.5 s and 130 MiB), so the
server asks here first and imports the adapter only for a bot that has credentials.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from bot.config import Config, PlatformSettings, platform_settings, secret
from bot.pacing import Lane, bot_and_chat_lanes, check_rates

__all__ = [
    "FeishuSecrets", "FeishuSettings", "credentials_present", "feishu_settings", "feishu_status",
    "has_credentials", "unconfigured_status"
]


@dataclass(frozen=True)
class FeishuSecrets:
    """The secrets Feishu's adapter holds, read from the variables `FeishuSettings`
    names: the app's id and secret, and the webhook's verification token and encrypt
    key. Never logged, never shown."""

    app_id: str
    app_secret: str
    verification_token: str | None = None
    encrypt_key: str | None = None

    def __repr__(self) -> str:
        return f"FeishuSecrets(app_id={self.app_id!r}, ...)"


class FeishuSettings(PlatformSettings, frozen=True, kw_only=True):
    """`[platforms.feishu]`: the variables holding its secrets, its Open API domain, the
    long connection instead of the webhook, and the pace of its messages: the send API
    takes 1000 a minute (and 50 a second) per app, and 5 a second to one chat, shared
    by the bots in it (Feishu's API reference)."""

    URLS: ClassVar[dict[str, str]] = {"domain": "https://open.feishu.cn"}
    RATES: ClassVar[tuple[str, ...]] = ("post_rate", "chat_post_rate")

    app_id_env: str = "FEISHU_APP_ID"
    app_secret_env: str = "FEISHU_APP_SECRET"
    verification_token_env: str = "FEISHU_VERIFICATION_TOKEN"
    encrypt_key_env: str = "FEISHU_ENCRYPT_KEY"
    domain: str = "https://open.feishu.cn"
    long_connection: bool = False
    post_rate: str = "1000/min"
    chat_post_rate: str = "5/s"

    def check(self, where: str) -> None:
        check_rates(self, where, self.RATES)

    def post_lanes(self, chat_id: str) -> tuple[Lane, ...]:
        """The lanes a message to `chat_id` waits its turn in: the app's, the chat's."""
        return bot_and_chat_lanes("feishu", chat_id, self, "post_rate", "chat_post_rate")


def feishu_settings(config: Config) -> FeishuSettings:
    """The config's `[platforms.feishu]`, its defaults where absent."""
    return platform_settings(config, "feishu", FeishuSettings)


def credentials_present(config: Config) -> bool:
    """The app id and secret are in the environment (Feishu may then be on)."""
    section = feishu_settings(config)
    return secret(section.app_id_env) is not None and secret(section.app_secret_env) is not None


def feishu_status(config: Config) -> dict[str, Any]:
    """For /healthz before any adapter exists: which settings are present (names of
    the environment variables only, never their values)."""
    section = feishu_settings(config)
    names = (section.app_id_env, section.app_secret_env, section.verification_token_env,
             section.encrypt_key_env)
    missing = sorted(env for env in names if secret(env) is None)
    configured = credentials_present(config) and (
        section.long_connection or secret(section.verification_token_env) is not None)
    return {"platform": "feishu", "configured": configured,
            "mode": "long_connection" if section.long_connection else "webhook",
            "missing_env": missing}


def missing_post_env(config: Config) -> list[str]:
    """What posting a message needs and is not set: the app id and secret only."""
    section = feishu_settings(config)
    return [name for name in (section.app_id_env, section.app_secret_env)
            if secret(name) is None]


def has_credentials(config: Config) -> bool:
    """Whether the adapter is worth importing: the app id and secret are set (webhook
    mode also needs the verification token, which the adapter checks and logs)."""
    return credentials_present(config)


def unconfigured_status(config: Config) -> dict[str, Any]:
    """/healthz for Feishu without an adapter: mode and the variables not set."""
    return dict(feishu_status(config), configured=False)
