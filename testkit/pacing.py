"""The three fake platforms enforcing a rate, with the config and environment that point
the real adapters at them: what the pacing tests post through."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from adapters.registry import PLATFORM_SCHEMAS
from bot.config import Config, parse_config
from testkit.fakes.feishu import FakeFeishu
from testkit.fakes.rate_limit import FakeRateLimit
from testkit.fakes.slack import BOT_TOKEN, FakeSlack
from testkit.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from testkit.fakes.telegram import FakeTelegram

PLATFORMS = ("slack", "telegram", "feishu")
FEISHU_SECRET = "pacing-app-secret"


@dataclass
class LimitedPlatforms:
    """The fakes, each refusing posts beyond its `FakeRateLimit`."""

    slack: FakeSlack
    telegram: FakeTelegram
    feishu: FakeFeishu
    limits: dict[str, FakeRateLimit]

    def env(self) -> dict[str, str]:
        """The variables holding each platform's secrets, as the fakes expect them."""
        return {"SLACK_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
                "FEISHU_APP_ID": self.feishu.app_id, "FEISHU_APP_SECRET": FEISHU_SECRET}

    def config(self, channels: Sequence[dict[str, Any]], *, rate: str) -> Config:
        """A config of `channels` (of acme/lumen) whose platforms are these fakes, each
        paced at `rate` per bot (chats at their platform's defaults)."""
        return parse_config({
            "repos": {"acme/lumen": {"timezone": "Asia/Shanghai"}},
            "channels": list(channels),
            "platforms": {
                "slack": {"api_url": self.slack.base_url, "post_rate": rate},
                "telegram": {"api_url": self.telegram.base_url, "post_rate": rate},
                "feishu": {"domain": self.feishu.base_url, "post_rate": rate},
            },
        }, platforms=PLATFORM_SCHEMAS)

    def refused(self) -> dict[str, int]:
        """The 429s each platform answered."""
        return {name: limit.refused for name, limit in self.limits.items()}

    def delivered(self) -> dict[str, list[str]]:
        """The chat of every message each platform took, in order."""
        return {"slack": [m["channel"] for m in self.slack.posted()],
                "telegram": [f["chat_id"] for f in self.telegram.sent()],
                "feishu": [card.target for card in self.feishu.sent_cards()]}


@contextlib.contextmanager
def limited_platforms(per_second: float, *, burst: float) -> Iterator[LimitedPlatforms]:
    """Slack, Telegram and Feishu fakes, each taking `per_second` posts across its chats
    (a bucket of `burst`) and answering 429 beyond."""
    limits = {name: FakeRateLimit(per_second, burst) for name in PLATFORMS}
    with (FakeSlack(rate_limit=limits["slack"]) as slack,
          FakeTelegram(rate_limit=limits["telegram"]) as telegram,
          FakeFeishu(app_id=f"cli_{uuid.uuid4().hex[:16]}", app_secret=FEISHU_SECRET,
                     rate_limit=limits["feishu"]) as feishu):
        yield LimitedPlatforms(slack, telegram, feishu, limits)
