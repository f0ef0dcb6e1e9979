"""The world the reliability tests and `bench/faults.py` run prdigest in: the fake
GitHub (PyGithub talks to it), Slack, Telegram and Feishu (their real SDKs talk to
them), each a real server on 127.0.0.1:0 in its own thread, and the full configuration
that points prdigest at them. The service itself runs in-process (`create_app` with
this config) or as `prdigest serve` in a subprocess (`serve_process`)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.clock import HeldClock
from bot.config import Config, load_config
from bot.models import PullRequest
from testkit.fakes.feishu import FakeFeishu
from testkit.fakes.github import FakeGitHub
from testkit.fakes.slack import FakeSlack
from testkit.fakes.telegram import FakeTelegram
from testkit.reliability.hostile import example_pulls, private_pulls
from testkit.reliability.live import feishu_live, slack_live, telegram_live
from testkit.reliability.names import (
    FEISHU_CHAT,
    GITHUB_TOKEN,
    NOW,
    PRIVATE_REPO,
    REPO,
    SECRETS,
    SLACK_ADMIN,
    SLACK_CHANNEL,
    SLACK_VAULT_CHANNEL,
    TELEGRAM_CHAT,
    TZ,
)


@dataclass
class Urls:
    github: str
    slack: str
    telegram: str
    feishu: str


UNPACED = "1000/s"
"""A post rate no run here reaches."""


def config_text(urls: Urls, *, schedule: str = "0 9 * * MON", catch_up_hours: float = 12,
                public_url: str = "http://localhost:8080", extra: str = "",
                report_requests_per_minute: int = 100_000,
                report_points_per_hour: int | None = None) -> str:
    """The full configuration: both repositories, four channels (one per platform for
    the public repository, a Slack channel for the private one), every platform on.
    The report pages' rate limit is out of the way: these runs send pages by the
    hundred from one address. So is the pacing toward the platforms: they send dozens
    of answers to one chat at once, which the platforms' per-chat rates would spread
    over half a minute (the pacing has tests of its own)."""
    return f"""
[repos."{REPO}"]
timezone = "{TZ}"
[repos."{REPO}".topics]
npu = {{ keywords = ["npu", "ascend", "hccl"], paths = ["**/npu/**"] }}
checkpoint = {{ keywords = ["checkpoint"], paths = ["lumen/checkpoint/**"] }}

[repos."{PRIVATE_REPO}"]
timezone = "{TZ}"
private = true

[[channels]]
platform = "slack"
id = "{SLACK_CHANNEL}"
repo = "{REPO}"
lang = "en"
schedule = "{schedule}"
timezone = "{TZ}"
topics = ["npu"]
admins = ["{SLACK_ADMIN}"]

[[channels]]
platform = "telegram"
id = "{TELEGRAM_CHAT}"
repo = "{REPO}"
lang = "en"
schedule = "{schedule}"
timezone = "{TZ}"

[[channels]]
platform = "feishu"
id = "{FEISHU_CHAT}"
repo = "{REPO}"
lang = "zh"
schedule = "{schedule}"
timezone = "{TZ}"

[[channels]]
platform = "slack"
id = "{SLACK_VAULT_CHANNEL}"
repo = "{PRIVATE_REPO}"
lang = "en"
schedule = "{schedule}"
timezone = "{TZ}"

[github]
api_url = "{urls.github}"
timeout_seconds = 1.0

[server]
public_url = "{public_url}"
catch_up_hours = {catch_up_hours}
report_requests_per_minute = {report_requests_per_minute}
{"" if report_points_per_hour is None else
 f"report_points_per_hour = {report_points_per_hour}"}

[platforms.slack]
api_url = "{urls.slack}"
post_rate = "{UNPACED}"
channel_post_rate = "{UNPACED}"

[platforms.telegram]
api_url = "{urls.telegram}"
post_rate = "{UNPACED}"
group_post_rate = "{UNPACED}"
chat_post_rate = "{UNPACED}"

[platforms.feishu]
domain = "{urls.feishu}"
post_rate = "{UNPACED}"
chat_post_rate = "{UNPACED}"
{extra}
"""


def write_config(path: Path, urls: Urls, **options: Any) -> Config:
    path.write_text(config_text(urls, **options), encoding="utf-8")
    return load_config(path)


# --- the fakes, together -----------------------------------------------------------------------


@dataclass
class World:
    """The fakes one run talks to, and the environment that points prdigest at them."""

    github: FakeGitHub
    slack: FakeSlack
    telegram: FakeTelegram
    feishu: FakeFeishu
    feishu_app_id: str

    def urls(self) -> Urls:
        return Urls(github=self.github.base_url, slack=self.slack.base_url,
                    telegram=self.telegram.base_url, feishu=self.feishu.base_url)

    def env(self, redis_url: str | None = None) -> dict[str, str]:
        """The environment variables a full configuration reads."""
        values = dict(SECRETS, FEISHU_APP_ID=self.feishu_app_id)
        if redis_url:
            values["REDIS_URL"] = redis_url
        return values

    # -- what arrived --

    def slack_messages(self) -> list[dict[str, Any]]:
        """Every message Slack accepted: chat.postMessage and response_url answers."""
        return self.slack.posted("chat.postMessage") + self.slack.posted("response")

    def telegram_messages(self) -> list[dict[str, str]]:
        return self.telegram.sent()

    def feishu_cards(self) -> list[dict[str, Any]]:
        return [card.card for card in self.feishu.sent_cards()]

    def live_mentions(self) -> list[str]:
        """Every live mention, tag or trick in every payload any platform accepted."""
        found = [f"slack: {p}" for m in self.slack_messages() for p in slack_live(m)]
        found += [f"telegram: {p}" for m in self.telegram_messages() for p in telegram_live(m)]
        found += [f"feishu: {p}" for c in self.feishu_cards() for p in feishu_live(c)]
        return found

    def payload_count(self) -> int:
        return (len(self.slack_messages()) + len(self.telegram_messages())
                + len(self.feishu_cards()))


@contextlib.contextmanager
def world(*, pulls: list[PullRequest] | None = None,
          private: list[PullRequest] | None = None) -> Iterator[World]:
    """The four fakes, started; GitHub holds the example week (plus the hostile PR) and
    the private repository."""
    app_id = f"cli_{uuid.uuid4().hex[:16]}"  # lark-oapi caches tokens per app id
    with contextlib.ExitStack() as stack:
        github = stack.enter_context(FakeGitHub(token=GITHUB_TOKEN))
        github.add_repo(REPO, example_pulls() if pulls is None else pulls)
        github.add_repo(PRIVATE_REPO, private_pulls() if private is None else private,
                        private=True)
        slack = stack.enter_context(FakeSlack())
        telegram = stack.enter_context(FakeTelegram(token=SECRETS["TELEGRAM_BOT_TOKEN"]))
        feishu = stack.enter_context(FakeFeishu(app_id=app_id,
                                                app_secret=SECRETS["FEISHU_APP_SECRET"]))
        yield World(github=github, slack=slack, telegram=telegram, feishu=feishu,
                    feishu_app_id=app_id)


def clock() -> HeldClock:
    """A service's clock: the date held at `NOW`, waits in real time."""
    return HeldClock(NOW)
