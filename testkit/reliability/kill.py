"""The service SIGKILLed in the middle of its weekly posts, and started again.

`prdigest serve` (through `serve_runner`, so a dead process's slot lock expires in
5 s instead of 60) runs against the fakes with every channel's cron due; a proxy in
front of each chosen platform parks that platform's first digest message - `before`
the platform sees it (the post is lost in flight) or `after` the platform took it
(only its answer is lost). Once every chosen post is parked, the process is killed
with SIGKILL, the parked requests are let go, and a new process starts on the same
Redis. It must finish every weekly post, and each channel must show its digest once.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import redis

from bot.store.keys import Keys
from bot.store.ledger import Slot, decode_entry
from bot.week import shift_week
from testkit.reliability.holding_proxy import HoldingProxy
from testkit.reliability.names import (
    FEISHU_CHAT,
    PRIVATE_REPO,
    REPO,
    SLACK_CHANNEL,
    SLACK_VAULT_CHANNEL,
    TELEGRAM_CHAT,
    TZ,
)
from testkit.reliability.posts import (
    PostCount,
    count_posts,
    feishu_visible,
    previous_week,
    slack_channel_texts,
    telegram_chat_texts,
    week_pulls_for,
)
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.world import world, write_config

# The request that carries a digest message, by platform.
POST_PATHS = {"slack": "chat.postMessage", "telegram": "sendMessage",
              "feishu": "/open-apis/im/v1/messages"}
SECOND_REPO = "acme/prism"
MULTI_CHANNEL = "CMULTI001"
# Each channel posted to, by name: its platform, its id, and what its digest covers.
CHANNELS = {"slack": ("slack", SLACK_CHANNEL, REPO),
            "telegram": ("telegram", TELEGRAM_CHAT, REPO),
            "feishu": ("feishu", FEISHU_CHAT, REPO),
            "vault": ("slack", SLACK_VAULT_CHANNEL, PRIVATE_REPO),
            "multi": ("slack", MULTI_CHANNEL, f"{REPO}, {SECOND_REPO}")}
# A Slack channel with one digest of two repositories, on the same schedule.
MULTI_REPO_CONFIG = f"""
[repos."{SECOND_REPO}"]
timezone = "{TZ}"

[[channels]]
platform = "slack"
id = "{MULTI_CHANNEL}"
repos = ["{REPO}", "{SECOND_REPO}"]
lang = "en"
schedule = "* * * * *"
timezone = "{TZ}"
"""


@dataclass(frozen=True)
class KillOutcome:
    """What each channel got, what the ledger says, and how long the restart took."""

    holds: Mapping[str, str]
    posts: Mapping[str, PostCount]
    ledger: Mapping[str, str]
    recover_seconds: float
    """From the restart to every post recorded (start-up included)."""
    start_seconds: float
    """From the restart to the restarted process answering (a loaded machine's share)."""
    requests_held: int

    @property
    def exactly_once(self) -> bool:
        return all((c.delivered, c.duplicated, c.lost) == (1, 0, 0)
                   for c in self.posts.values())


def _ledger_states(client: redis.Redis, week: str) -> dict[str, str]:
    states: dict[str, str] = {}
    for name, (platform, channel, scope) in CHANNELS.items():
        raw = client.get(Keys().ledger(Slot(week, f"{platform}:{channel}", scope).name))
        entry = decode_entry(raw if isinstance(raw, bytes) or raw is None else bytes(raw))
        states[name] = entry.state if entry is not None else "none"
    return states


def kill_mid_post(holds: Mapping[str, str], redis_url: str, workdir: Path, *,
                  timeout: float = 60.0) -> KillOutcome:
    """Kill the service while the first posts of the channels named in `holds`
    ({channel name: "before"|"after"}) are parked, restart it, and count what every
    channel received."""
    week = previous_week()
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    pulls = (week_pulls_for(week) +
             week_pulls_for(shift_week(week, -1), seed=4, first_number=900))
    with contextlib.ExitStack() as stack:
        fakes = stack.enter_context(world(pulls=pulls))
        fakes.github.add_repo(SECOND_REPO, week_pulls_for(week, SECOND_REPO, seed=5,
                                                          first_number=3000))
        urls = fakes.urls()
        proxies = {
            "slack": stack.enter_context(HoldingProxy(fakes.slack.base_url)),
            "telegram": stack.enter_context(HoldingProxy(fakes.telegram.base_url)),
            "feishu": stack.enter_context(HoldingProxy(fakes.feishu.base_url)),
        }
        urls.slack = proxies["slack"].base_url
        urls.telegram = proxies["telegram"].base_url
        urls.feishu = proxies["feishu"].base_url
        config = workdir / "prdigest.toml"
        write_config(config, urls, schedule="* * * * *", catch_up_hours=1,
                     extra=MULTI_REPO_CONFIG)
        parked = [proxies[CHANNELS[name][0]].hold(POST_PATHS[CHANNELS[name][0]], when,
                                                  body_part=CHANNELS[name][1].encode())
                  for name, when in holds.items()]
        log = workdir / "serve.log"

        first = ServeProcess(config, fakes.env(redis_url), log, runner=True).start()
        try:
            deadline = time.monotonic() + timeout
            for hold in parked:
                if not hold.parked.wait(max(0.1, deadline - time.monotonic())):
                    raise RuntimeError(f"no digest post reached {hold.path_part}: "
                                       f"{log.read_text(errors='replace')[-3000:]}")
            # Kill with exactly the parked posts in flight: every other one recorded.
            while sum(s == "posted" for s in _ledger_states(client, week).values()) < \
                    len(CHANNELS) - len(parked) and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            first.kill()
        for proxy in proxies.values():
            proxy.release()

        restarted = time.monotonic()
        second = ServeProcess(config, fakes.env(redis_url), log, runner=True).start()
        answering = time.monotonic()
        try:
            while True:
                states = _ledger_states(client, week)
                if all(state == "posted" for state in states.values()):
                    break
                if time.monotonic() - answering > timeout:
                    raise RuntimeError(f"not every post recorded: {states}: "
                                       f"{log.read_text(errors='replace')[-3000:]}")
                time.sleep(0.1)
            recovered = time.monotonic() - restarted
            time.sleep(0.5)  # anything sent twice would arrive now
        finally:
            second.stop()
        posts = {
            "slack": count_posts(slack_channel_texts(fakes.slack, SLACK_CHANNEL)),
            "vault": count_posts(slack_channel_texts(fakes.slack, SLACK_VAULT_CHANNEL)),
            "telegram": count_posts(telegram_chat_texts(fakes.telegram, TELEGRAM_CHAT)),
            "feishu": count_posts(feishu_visible(fakes.feishu, FEISHU_CHAT)),
            "multi": count_posts(slack_channel_texts(fakes.slack, MULTI_CHANNEL)),
        }
        client.close()
        return KillOutcome(holds=dict(holds), posts=posts, ledger=states,
                           recover_seconds=recovered, start_seconds=answering - restarted,
                           requests_held=len(parked))


def describe(outcome: KillOutcome) -> str:
    return json.dumps({name: (c.delivered, c.duplicated, c.lost)
                       for name, c in outcome.posts.items()})
