"""What the config and environment say about Slack, without importing Bolt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from bot.config import Config, PlatformSettings, Secrets, platform_settings, secret
from bot.errors import ConfigError
from bot.pacing import Lane, bot_and_chat_lanes, check_rates

__all__ = ["SlackSecrets", "SlackSettings", "missing_env", "missing_post_env", "missing_secrets",
           "slack_secrets", "slack_settings"]


class SlackSettings(PlatformSettings, frozen=True, kw_only=True):
    """`[platforms.slack]`: the variables holding its secrets, its API, Socket Mode, the
    workspaces and app it answers (unset: any that signs with the secret), and the pace
    of its posts: chat.postMessage takes about one message a second per channel and
    "several hundred a minute" across the workspace (Slack's rate-limit docs)."""

    RATES: ClassVar[tuple[str, ...]] = ("post_rate", "channel_post_rate")

    URLS: ClassVar[dict[str, str]] = {"api_url": "https://slack.com/api/"}

    bot_token_env: str = "SLACK_BOT_TOKEN"
    signing_secret_env: str = "SLACK_SIGNING_SECRET"
    app_token_env: str = "SLACK_APP_TOKEN"
    api_url: str = "https://slack.com/api/"
    socket_mode: bool = False
    # When set, events from any other workspace or Slack app are not answered.
    team_ids: tuple[str, ...] = ()
    app_id: str | None = None
    post_rate: str = "300/min"
    channel_post_rate: str = "1/s"

    def check(self, where: str) -> None:
        for index, team in enumerate(self.team_ids):
            if not team.strip() or team.strip() != team:
                raise ConfigError(f"{where}.team_ids[{index}]: expected a workspace id such "
                                  f"as T0123ABCD, got {team!r}")
        if self.app_id is not None and (not self.app_id.strip()
                                        or self.app_id.strip() != self.app_id):
            raise ConfigError(f"{where}.app_id: expected an app id such as A0123ABCD, got "
                              f"{self.app_id!r}")
        check_rates(self, where, self.RATES)

    def post_lanes(self, channel_id: str) -> tuple[Lane, ...]:
        """The lanes a message to `channel_id` waits its turn in: the workspace's, the
        channel's."""
        return bot_and_chat_lanes("slack", channel_id, self, "post_rate", "channel_post_rate")


@dataclass(frozen=True, repr=False)
class SlackSecrets(Secrets):
    """The secrets Slack's adapter holds, read from the variables `SlackSettings` names:
    the bot token, the signing secret (HTTP mode) and the app-level token (Socket
    Mode). Never logged, never shown."""

    bot_token: str
    signing_secret: str | None = None
    app_token: str | None = None


def slack_secrets(settings: SlackSettings) -> SlackSecrets:
    """The secrets in the environment, as they are (the bot token empty when unset):
    `missing_secrets` says whether they are enough."""
    return SlackSecrets(secret(settings.bot_token_env) or "",
                        secret(settings.signing_secret_env), secret(settings.app_token_env))


def missing_secrets(settings: SlackSettings, found: SlackSecrets, *,
                    outbound_only: bool = False) -> dict[str, str]:
    """{variable: what it holds} of the secrets Slack needs that `found` lacks: the bot
    token, and - unless the adapter only posts (`prdigest post`) - the app-level token
    in Socket Mode or the signing secret over HTTP. The one rule for the adapter, its
    `from_config` and /healthz."""
    needed: list[tuple[str, str, str | None]] = [
        (settings.bot_token_env, "the bot token (xoxb-...)", found.bot_token)]
    if not outbound_only:
        needed.append((settings.app_token_env, "an app-level token (xapp-...)", found.app_token)
                      if settings.socket_mode else
                      (settings.signing_secret_env, "the signing secret", found.signing_secret))
    return {name: what for name, what, value in needed if not value}


def slack_settings(config: Config) -> SlackSettings:
    """The config's `[platforms.slack]`, its defaults where absent."""
    return platform_settings(config, "slack", SlackSettings)


def missing_env(config: Config) -> list[str]:
    """The environment variables (names only) Slack still needs (`missing_secrets`)."""
    settings = slack_settings(config)
    return list(missing_secrets(settings, slack_secrets(settings)))


def missing_post_env(config: Config) -> list[str]:
    """What posting a message needs and is not set: the bot token only."""
    settings = slack_settings(config)
    return list(missing_secrets(settings, slack_secrets(settings), outbound_only=True))
