"""`prdigest serve` SIGKILLed with acknowledged work in flight, restarted, and sent
every delivery again exactly as before.

Ten questions on each platform and one merged-PR notice are acknowledged by the first
process; a proxy in front of each platform parks every answer (and the notice) before
the platform sees it, and once all are parked the process is killed. A second process
starts on the same Redis, the same 30 requests and the same GitHub delivery arrive
again (as the platforms' retries, or GitHub's "redeliver", would send them), and each
question must be answered once and the notice posted once.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis

from testkit.fakes.feishu import bot_mention, encrypt, message_event
from testkit.fakes.feishu import signed_headers as feishu_headers
from testkit.fakes.slack_payloads import SlackPayloads
from testkit.fakes.slack_payloads import signed_headers as slack_headers
from testkit.fakes.telegram import group_chat, message_update
from testkit.fakes.telegram import user as telegram_user
from testkit.reliability.holding_proxy import HoldingProxy
from testkit.reliability.names import REPO, SECRETS, SLACK_CHANNEL, TELEGRAM_CHAT
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.serve_runner import ALIVE_WAIT
from testkit.reliability.world import World, world, write_config
from testkit.server_support import merged_event, sign, snapshot_pull

PER_PLATFORM = 10
NOTICE_PULL = 1208  # an NPU change: the Slack channel follows `npu`
ANSWER_PATHS = {"slack": "chat.postMessage", "telegram": "sendMessage",
                "feishu": "/open-apis/im/v1/messages"}

Request = tuple[str, bytes, dict[str, str]]


@dataclass(frozen=True)
class CrashOutcome:
    """Answers per question (by platform) and notices, after the restart."""

    answers: dict[str, list[int]]
    notices: int
    parked: int
    recover_seconds: float

    @property
    def answered_once(self) -> bool:
        return self.notices == 1 and all(
            counts == [1] * PER_PLATFORM for counts in self.answers.values())

    @property
    def lost(self) -> int:
        return sum(c == 0 for counts in self.answers.values() for c in counts) + \
            (self.notices == 0)

    @property
    def duplicated(self) -> int:
        return sum(max(c - 1, 0) for counts in self.answers.values() for c in counts) + \
            max(self.notices - 1, 0)


def requests_of(fakes: World) -> tuple[list[Request], Request]:
    """The 30 questions and the GitHub delivery, built once so they can be re-sent
    byte for byte."""
    payloads = SlackPayloads()
    questions: list[Request] = []
    for n in range(PER_PLATFORM):
        body = json.dumps(payloads.event_callback(payloads.app_mention(
            "<@UBOT0001> help", channel=SLACK_CHANNEL, ts=f"1700000{n:03d}.000100"))).encode()
        questions.append(("/slack/events", body,
                          slack_headers(body, content_type="application/json")))
        update = message_update(5000 + n, "/help", chat=group_chat(int(TELEGRAM_CHAT)),
                                sender=telegram_user(), message_id=7000 + n)
        questions.append(("/telegram/webhook", json.dumps(update).encode(), {
            "Content-Type": "application/json",
            "X-Telegram-Bot-Api-Secret-Token": SECRETS["TELEGRAM_WEBHOOK_SECRET"]}))
        event = message_event("@_user_1 help", token=SECRETS["FEISHU_VERIFICATION_TOKEN"],
                              mentions=[bot_mention()], app_id=fakes.feishu_app_id,
                              message_id=f"om_crash_{n}")
        body = encrypt(SECRETS["FEISHU_ENCRYPT_KEY"], event)
        questions.append(("/feishu/events", body,
                          feishu_headers(body, SECRETS["FEISHU_ENCRYPT_KEY"])))
    body = json.dumps(merged_event(snapshot_pull(NOTICE_PULL), REPO)).encode()
    notice = ("/github/webhook", body, {
        "Content-Type": "application/json", "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": uuid.uuid4().hex,
        "X-Hub-Signature-256": sign(body, SECRETS["GITHUB_WEBHOOK_SECRET"])})
    return questions, notice


def answers_of(fakes: World) -> dict[str, list[int]]:
    """How often each question was answered, by platform, in question order."""
    slack = Counter(p.get("thread_ts") for p in fakes.slack.posted("chat.postMessage"))
    telegram = Counter(json.loads(m["reply_parameters"])["message_id"]
                       for m in fakes.telegram.sent() if m.get("reply_parameters"))
    feishu = Counter(c.target for c in fakes.feishu.sent_cards() if c.endpoint == "reply")
    return {
        "slack": [slack[f"1700000{n:03d}.000100"] for n in range(PER_PLATFORM)],
        "telegram": [telegram[7000 + n] for n in range(PER_PLATFORM)],
        "feishu": [feishu[f"om_crash_{n}"] for n in range(PER_PLATFORM)],
    }


def notices_of(fakes: World) -> int:
    return sum(1 for p in fakes.slack.posted("chat.postMessage")
               if p.get("channel") == SLACK_CHANNEL and not p.get("thread_ts"))


def send_all(url: str, requests: list[Request]) -> list[int]:
    with httpx.Client(base_url=url, timeout=30) as client:
        return [client.post(path, content=body, headers=headers).status_code
                for path, body, headers in requests]


@dataclass
class InFlight:
    """A service killed with every answer and the notice parked; the fakes still run.
    `standby`: replicas on the same Redis, started before the kill."""

    fakes: World
    config: Path
    log: Path
    questions: list[Request]
    notice: Request
    parked: int
    killed_at: float
    standby: list[ServeProcess]


@contextlib.contextmanager
def killed_in_flight(redis_url: str, workdir: Path, *, timeout: float = 60.0,
                     runner: bool = True, standby: int = 0) -> Iterator[InFlight]:
    """`prdigest serve` (through `serve_runner` when `runner`) acknowledges the 30
    questions and takes the notice; once every answer and the notice are parked before
    their platform, it is SIGKILLed. Replicas started meanwhile are stopped on exit."""
    redis.Redis.from_url(redis_url).flushall()
    with contextlib.ExitStack() as stack:
        fakes = stack.enter_context(world())
        urls = fakes.urls()
        proxies = {name: stack.enter_context(HoldingProxy(getattr(fakes, name).base_url))
                   for name in ANSWER_PATHS}
        urls.slack, urls.telegram, urls.feishu = (proxies[name].base_url
                                                  for name in ("slack", "telegram", "feishu"))
        config = workdir / "prdigest.toml"
        write_config(config, urls)
        holds = [proxies[name].hold(path, "before",
                                    count=PER_PLATFORM + (name == "slack"))
                 for name, path in ANSWER_PATHS.items()]
        questions, notice = requests_of(fakes)
        log = workdir / "serve.log"
        env = fakes.env(redis_url)
        replicas = [ServeProcess(config, env, workdir / f"replica-{n}.log",
                                 runner=runner).start() for n in range(standby)]
        for replica in replicas:
            stack.callback(replica.stop)

        first = ServeProcess(config, env, log, runner=runner).start()
        try:
            acknowledged = send_all(first.url, questions)
            if set(acknowledged) != {200}:
                raise RuntimeError(f"questions not acknowledged: {Counter(acknowledged)}")
            # GitHub waits for its answer; the notice is parked, so send it aside.
            threading.Thread(target=lambda: quiet_send(first.url, notice),
                             daemon=True).start()
            deadline = time.monotonic() + timeout
            for hold in holds:
                if not hold.parked.wait(max(0.1, deadline - time.monotonic())):
                    raise RuntimeError(f"not every answer reached {hold.path_part} "
                                       f"({hold.taken} of {hold.count}): "
                                       f"{log.read_text(errors='replace')[-3000:]}")
        finally:
            first.kill()
        killed = time.monotonic()
        for proxy in proxies.values():
            proxy.release()
        yield InFlight(fakes=fakes, config=config, log=log, questions=questions,
                       notice=notice, parked=sum(hold.taken for hold in holds),
                       killed_at=killed, standby=replicas)


def wait_answered(fakes: World, timeout: float) -> None:
    """Until every question is answered and the notice posted (or `timeout`), then a
    second more: anything answered twice would arrive by then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (
            all(all(counts) for counts in answers_of(fakes).values()) and notices_of(fakes)):
        time.sleep(0.1)
    time.sleep(1.0)


def crash_after_ack(redis_url: str, workdir: Path, *, timeout: float = 60.0) -> CrashOutcome:
    """Kill the service with every answer and the notice parked, restart, re-deliver."""
    with killed_in_flight(redis_url, workdir, timeout=timeout) as flight:
        restarted = time.monotonic()
        second = ServeProcess(flight.config, flight.fakes.env(redis_url), flight.log,
                              runner=True).start()
        try:
            # The dead process's alive mark (serve_runner's) must have expired.
            time.sleep(max(0.0, flight.killed_at + ALIVE_WAIT - time.monotonic()))
            statuses = send_all(second.url, [*flight.questions, flight.notice])
            if any(status >= 500 for status in statuses):
                raise RuntimeError(f"re-delivery refused: {Counter(statuses)}")
            wait_answered(flight.fakes, timeout)
            recovered = time.monotonic() - restarted - 1.0
        finally:
            second.stop()
        return CrashOutcome(answers=answers_of(flight.fakes), notices=notices_of(flight.fakes),
                            parked=flight.parked, recover_seconds=recovered)


def quiet_send(url: str, request: Request) -> None:
    with contextlib.suppress(httpx.HTTPError):
        send_all(url, [request])
