"""What the config and environment say about Telegram, without importing PTB."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from bot.config import Config, PlatformSettings, Secrets, platform_settings, secret
from bot.errors import ConfigError
from bot.pacing import Lane, bot_and_chat_lanes, check_rates

__all__ = [
    "TelegramSecrets", "TelegramSettings", "missing_env", "missing_post_env",
    "telegram_settings"
]


@dataclass(frozen=True, repr=False)
class TelegramSecrets(Secrets):
    """The secrets Telegram's adapter holds, read from the variables `TelegramSettings`
    names: the bot token and the webhook's secret token. Never logged, never shown."""

    token: str
    secret_token: str | None = None


class TelegramSettings(PlatformSettings, frozen=True, kw_only=True):
    """`[platforms.telegram]`: the variables holding its secrets, its Bot API, long
    polling instead of the webhook, and the pace of its messages: Telegram's bot FAQ
    asks for at most ~30 messages a second in all, 20 a minute to one group or channel
    and one a second to one chat.

    A message whose answer does not come within `send_timeout_seconds` may have been
    posted all the same: Telegram takes no idempotency key and a bot cannot read a
    chat's history, so `in_doubt` says what becomes of such a weekly post - `hold` it
    for an operator (never twice; `prdigest post --force` sends it) or `resend` it (never
    lost; possibly twice)."""

    URLS: ClassVar[dict[str, str]] = {"api_url": "https://api.telegram.org/bot"}
    RATES: ClassVar[tuple[str, ...]] = ("post_rate", "group_post_rate", "chat_post_rate")

    bot_token_env: str = "TELEGRAM_BOT_TOKEN"
    secret_token_env: str = "TELEGRAM_WEBHOOK_SECRET"
    api_url: str = "https://api.telegram.org/bot"
    polling: bool = False
    post_rate: str = "30/s"
    group_post_rate: str = "20/min"
    chat_post_rate: str = "1/s"
    send_timeout_seconds: float = 30.0
    in_doubt: Literal["hold", "resend"] = "hold"

    def check(self, where: str) -> None:
        check_rates(self, where, self.RATES)
        seconds = self.send_timeout_seconds
        if not (math.isfinite(seconds) and 5 <= seconds <= 300):
            raise ConfigError(f"{where}.send_timeout_seconds: must be a number from 5 to "
                              f"300, got {seconds:g}")

    def post_lanes(self, chat_id: str) -> tuple[Lane, ...]:
        """The lanes a message to `chat_id` waits its turn in: the bot's, the chat's (a
        group or channel - a negative id or an @username - at the group rate)."""
        group = chat_id.startswith(("-", "@"))
        return bot_and_chat_lanes("telegram", chat_id, self, "post_rate",
                                  "group_post_rate" if group else "chat_post_rate")


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
