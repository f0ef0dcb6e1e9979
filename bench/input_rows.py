"""Rows of `bench/faults.py` for hostile input: fuzzed, forged, stale and replayed
requests on every route, and PR text full of mentions and markup (with every log line
searched for the secrets)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import random
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.fault_counts import add_posts, ask_everywhere, bad_responses, tick
from bench.fault_rows import Row
from testkit.fakes.feishu import bot_mention, encrypt, message_event
from testkit.fakes.feishu import signed_headers as feishu_headers
from testkit.fakes.slack_payloads import SlackPayloads
from testkit.fakes.slack_payloads import signed_headers as slack_headers
from testkit.fakes.telegram import group_chat, message_update
from testkit.reliability.harness import capturing_logs, service_in_process
from testkit.reliability.hostile import HOSTILE_NUMBER, HOSTILE_PIECES, hostile_pull
from testkit.reliability.live import html_live
from testkit.reliability.names import (
    REPO,
    SECRETS,
    SLACK_ADMIN,
    SLACK_CHANNEL,
    TELEGRAM_CHAT,
    WEEK,
)
from testkit.reliability.world import world
from testkit.server_support import merged_event, sign, snapshot_pull


def _garbage(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randbytes(rng.randrange(0, 3000))
    if kind == 1:
        depth = rng.choice((100, 5_000, 100_000))
        return b"[" * depth + b"]" * depth
    if kind == 2:
        return b"x" * ((1 << 20) + rng.randrange(1, 1000))
    if kind == 3:
        return json.dumps({"".join(chr(rng.randrange(0x20, 0x2FFFF)) for _ in range(8)):
                           "\ud800" if rng.random() < 0.5 else "\u202e\x00"}).encode(
            "utf-8", "surrogatepass")
    if kind == 4:
        return json.dumps(_random_json(rng, 4)).encode()
    return b"{not json"


def _random_json(rng: random.Random, depth: int) -> Any:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([None, True, 0, -1, 2**70, 1.5, "", "<!channel>", "\u202e", "a" * 500])
    if rng.random() < 0.5:
        return [_random_json(rng, depth - 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["update_id", "type", "event", "header", "message", "action", "x",
                        "pull_request", "challenge", "command", "text"]):
            _random_json(rng, depth - 1) for _ in range(rng.randrange(4))}


def _slack_signed(body: bytes, content_type: str) -> dict[str, str]:
    """Slack's v0 signature over any bytes (slack_sdk's helper wants UTF-8 text)."""
    stamp = str(int(time.time()))
    digest = hmac.new(SECRETS["SLACK_SIGNING_SECRET"].encode(),
                      b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
            "Content-Type": content_type}


def _signed_headers(route: str, body: bytes, content_type: str) -> dict[str, str]:
    if route == "/slack/events":
        return _slack_signed(body, content_type)
    if route == "/telegram/webhook":
        return {"Content-Type": content_type,
                "X-Telegram-Bot-Api-Secret-Token": SECRETS["TELEGRAM_WEBHOOK_SECRET"]}
    if route == "/feishu/events":
        return {**feishu_headers(body, SECRETS["FEISHU_ENCRYPT_KEY"]),
                "Content-Type": content_type}
    return {"Content-Type": content_type, "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": uuid.uuid4().hex,
            "X-Hub-Signature-256": sign(body, SECRETS["GITHUB_WEBHOOK_SECRET"])}


def _forged(route: str, body: bytes, rng: random.Random) -> dict[str, str]:
    stale = int(time.time()) - rng.choice((400, 3600, 86400))
    if route == "/slack/events":
        return rng.choice([slack_headers(body, secret="guess"),
                           slack_headers(body, timestamp=stale), slack_headers(b"other"), {}])
    if route == "/telegram/webhook":
        return rng.choice([{"X-Telegram-Bot-Api-Secret-Token": "guess"}, {}])
    if route == "/feishu/events":
        return rng.choice([feishu_headers(body, "guess"),
                           feishu_headers(body, SECRETS["FEISHU_ENCRYPT_KEY"], timestamp=stale),
                           {"Content-Type": "application/json"}])
    return rng.choice([{"X-Hub-Signature-256": sign(body, "guess"), "X-GitHub-Event": "ping"},
                       {"X-GitHub-Event": "pull_request"}])


async def bad_input(redis_url: str, workdir: Path, per_route: int) -> Row:
    """Per route: unsigned garbage (4xx expected), signed garbage and near-valid
    payloads (no 5xx), forged/stale signatures on valid payloads (401, nothing sent),
    and each platform's valid request replayed three times (answered once)."""
    row = Row("bad input on every route")
    rng = random.Random(20260720)
    routes = ("/slack/events", "/telegram/webhook", "/feishu/events", "/github/webhook")
    types = ("application/json", "application/x-www-form-urlencoded", "text/plain", "")
    valid = {
        "/slack/events": lambda: urlencode(SlackPayloads().slash_command(
            "help", channel_id=SLACK_CHANNEL,
            response_url="http://127.0.0.1:9/none")).encode(),
        "/telegram/webhook": lambda: json.dumps(message_update(
            rng.randrange(10**9), "/help", chat=group_chat(int(TELEGRAM_CHAT)))).encode(),
        "/feishu/events": lambda: encrypt(SECRETS["FEISHU_ENCRYPT_KEY"], message_event(
            "@_user_1 help", token=SECRETS["FEISHU_VERIFICATION_TOKEN"],
            mentions=[bot_mention()])),
        "/github/webhook": lambda: json.dumps(merged_event(snapshot_pull(1201), REPO)).encode(),
    }
    with world() as fakes:
        async with service_in_process(fakes, redis_url, workdir) as service:
            for route in routes:
                for _ in range(per_route):
                    body = _garbage(rng)
                    content_type = rng.choice(types)
                    unsigned = await service.post(route, content=body,
                                                  headers={"Content-Type": content_type})
                    if not 400 <= unsigned.status_code < 500:
                        row.problems.append(f"{route} unsigned -> {unsigned.status_code}")
                    await service.post(route, content=body,
                                       headers=_signed_headers(route, body, content_type))
                    row.events += 2
                sent_before = fakes.payload_count()
                for _ in range(max(10, per_route // 10)):
                    body = valid[route]()
                    forged = await service.post(route, content=body,
                                                headers=_forged(route, body, rng))
                    row.events += 1
                    if forged.status_code != 401:
                        row.problems.append(f"{route} forged -> {forged.status_code}")
                await asyncio.sleep(0.2)
                if fakes.payload_count() != sent_before:
                    row.problems.append(f"{route}: a forged request caused a message")
            # Replays: one answer per platform for three copies of one request.
            before = {"slack": len(fakes.slack.posted("response")),
                      "telegram": len(fakes.telegram.sent()),
                      "feishu": len(fakes.feishu.sent_cards())}
            slack_body = urlencode(SlackPayloads().slash_command(
                "help", channel_id=SLACK_CHANNEL,
                response_url=fakes.slack.response_url("replay"))).encode()
            telegram_body = valid["/telegram/webhook"]()
            feishu_body = valid["/feishu/events"]()
            for _ in range(3):
                for route, body, content_type in (
                        ("/slack/events", slack_body, "application/x-www-form-urlencoded"),
                        ("/telegram/webhook", telegram_body, "application/json"),
                        ("/feishu/events", feishu_body, "application/json")):
                    await service.post(route, content=body,
                                       headers=_signed_headers(route, body, content_type))
                    row.events += 1
                    row.faults += 1
            await service.services.process.adapters["slack"].drain(10)  # type: ignore[attr-defined]
            await service.services.process.adapters["feishu"].wait_idle(10)  # type: ignore[attr-defined]
            await asyncio.sleep(1.0)
            after = {"slack": len(fakes.slack.posted("response")),
                     "telegram": len(fakes.telegram.sent()),
                     "feishu": len(fakes.feishu.sent_cards())}
            for name in before:
                answers = after[name] - before[name]
                row.duplicated += max(0, answers - 1)
                row.lost += 1 if answers == 0 else 0
            row.faults += row.events
            row.bad_5xx = bad_responses(service)
            row.live = len(fakes.live_mentions())
    return row


# --- hostile text, secrets --------------------------------------------------------------------


async def hostile_text(redis_url: str, workdir: Path) -> Row:
    """A PR whose title, body, review and thread carry every mention and markup trick,
    asked about everywhere, posted weekly, announced on merge, shown on report pages;
    every log line of the run (DEBUG) searched for every secret."""
    row = Row("hostile PR text, secrets in logs")
    with world() as fakes, capturing_logs() as logs:
        async with service_in_process(fakes, redis_url, workdir) as service:
            for question in (f"risks for #{HOSTILE_NUMBER}", f"summary #{HOSTILE_NUMBER}",
                             "digest last week"):
                await ask_everywhere(service, question)
                row.events += 3
            await service.slack("subscribe rollout", user=SLACK_ADMIN)
            statuses = await tick(service)
            row.events += len(statuses) + 1
            notice = await service.github(merged_event(hostile_pull(), REPO))
            row.events += 1
            if not notice.json().get("notified"):
                row.problems.append("no merged-PR notice")
            pages = [await service.get(f"/reports/{REPO}/{WEEK}?lang={lang}")
                     for lang in ("en", "zh")]
            row.events += 2
            row.live = len(fakes.live_mentions()) + sum(len(html_live(p.text)) for p in pages)
            # Every hostile piece, in the title, body, review and review thread.
            row.faults = len(HOSTILE_PIECES) * 4
            row.note = f"{fakes.payload_count()} payloads and {len(pages)} pages checked"
            add_posts(row, service)
            row.bad_5xx = bad_responses(service)
            seen = "\n".join([logs.text, json.dumps(fakes.slack_messages()),
                              json.dumps(fakes.telegram_messages()),
                              json.dumps(fakes.feishu_cards()),
                              *(r.text for r in service.responses)])
            leaked = [name for name, value in SECRETS.items() if value in seen]
            if leaked:
                row.problems.append(f"secrets seen: {leaked}")
            if not leaked:
                row.note += f"; {len(logs.lines)} log lines (DEBUG) searched, 0 secrets"
    return row
