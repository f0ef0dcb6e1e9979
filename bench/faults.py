"""Faults, hostile input and restarts against the running service: what got through.

Every scenario drives the real service - in-process, or `prdigest serve` in a
subprocess for the SIGKILL rows - against the fake GitHub, Slack, Telegram and Feishu
on 127.0.0.1 and a private redis-server, with faults injected: GitHub 502/503 bursts,
secondary (403/429 + Retry-After) and primary (remaining 0 + reset) rate limits,
timeouts and a long outage; Slack and Telegram 429s; Feishu expired tenant tokens and
5xx; Redis SIGKILLed and restarted; the service SIGKILLed mid-post; fuzzed, forged,
stale and replayed requests; PR text full of mentions and markup; large unsigned
uploads (peak RSS), 3,000 slow connections (descriptors held), a never-firing cron,
and acknowledged questions SIGKILLed in flight then re-delivered
(`bench/fault_rows.py`); a backtracking title pattern while a webhook runs, and 600
slow connections from one address while another asks for /healthz
(`bench/edge_rows.py`); a Redis blip mid-notice, and retries at +1/+5/+12 s after a
SIGKILL (`bench/claim_rows.py`).

It prints one row per scenario - events sent, faults injected, weekly posts (or
answers) expected / delivered / duplicated, data lost (posts or answers that never
arrived), responses 5xx, live mentions, time to recover - and exits 1 when any row
breaks its expectation.

    python -m bench.faults [--rounds 1] [--fuzz 300] [--only NAME[,NAME]]

`--rounds N` repeats the SIGKILL and Redis rows N times each (a soak); `--fuzz` is
how many random requests per route the bad-input row sends.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import msgspec
import redis

from bench.claim_rows import early_retries_row, notice_blip_row
from bench.edge_rows import edge_rows
from bench.fault_rows import (
    Row,
    crash_after_ack_row,
    hostile_uploads_row,
    never_firing_cron_row,
    slow_clients_row,
)
from bot.store.redis_cache import Cache
from testkit.fakes.feishu import MESSAGES_PATH, bot_mention, encrypt, message_event
from testkit.fakes.feishu import signed_headers as feishu_headers
from testkit.fakes.slack_payloads import SlackPayloads
from testkit.fakes.slack_payloads import signed_headers as slack_headers
from testkit.fakes.telegram import group_chat, message_update
from testkit.redis_server import private_redis
from testkit.reliability.harness import Service, capturing_logs, service_in_process
from testkit.reliability.holding_proxy import HoldingProxy
from testkit.reliability.hostile import HOSTILE_NUMBER, HOSTILE_PIECES, hostile_pull
from testkit.reliability.kill import kill_mid_post
from testkit.reliability.killable_redis import KillableRedis
from testkit.reliability.live import html_live
from testkit.reliability.names import (
    FEISHU_CHAT,
    REPO,
    SECRETS,
    SLACK_ADMIN,
    SLACK_CHANNEL,
    SLACK_VAULT_CHANNEL,
    TELEGRAM_CHAT,
    TZ,
    WEEK,
)
from testkit.reliability.posts import (
    count_posts,
    feishu_visible,
    slack_channel_texts,
    telegram_chat_texts,
)
from testkit.reliability.world import world
from testkit.server_support import merged_event, sign, snapshot_pull

MONDAY = datetime(2026, 7, 20, 1, 5, tzinfo=UTC)  # every channel's W29 post is due
UNAVAILABLE = "could not get the data from GitHub"
STALE_NOTE = "GitHub could not be reached; this digest uses data cached"
QUESTIONS = ("risks for #1201", "summary #1203", "digest last week", "#1208 有什么风险",
             "topics", "help")


# --- counting -------------------------------------------------------------------------------


_MARKS: dict[int, dict[str, int]] = {}


def _mark(service: Service) -> None:
    """Remember how many messages each channel had before the weekly posts began, so
    answers to chat questions asked there before are not counted as posts."""
    if id(service) in _MARKS:
        return
    w = service.world
    _MARKS[id(service)] = {
        "slack": len(slack_channel_texts(w.slack, SLACK_CHANNEL)),
        "vault": len(slack_channel_texts(w.slack, SLACK_VAULT_CHANNEL)),
        "telegram": len(telegram_chat_texts(w.telegram, TELEGRAM_CHAT)),
        "feishu": len(feishu_visible(w.feishu, FEISHU_CHAT)),
    }


def _channel_posts(service: Service) -> dict[str, tuple[int, int, int]]:
    w = service.world
    marks = _MARKS.pop(id(service), {})
    messages = {
        "slack": slack_channel_texts(w.slack, SLACK_CHANNEL),
        "vault": slack_channel_texts(w.slack, SLACK_VAULT_CHANNEL),
        "telegram": telegram_chat_texts(w.telegram, TELEGRAM_CHAT),
        "feishu": feishu_visible(w.feishu, FEISHU_CHAT),
    }
    counts = {k: count_posts(v[marks.get(k, 0):]) for k, v in messages.items()}
    return {k: (c.delivered, c.duplicated, c.lost) for k, c in counts.items()}


def _add_posts(row: Row, service: Service) -> None:
    """The weekly posts of the four channels: each once, counted after `_tick` marked
    where chat answers end."""
    for delivered, duplicated, lost in _channel_posts(service).values():
        row.expected += 1
        row.delivered += min(delivered, 1)
        row.duplicated += duplicated
        row.lost += lost


def _bad(service: Service) -> int:
    """Responses 5xx, but /healthz's 503 while Redis is down: that one is the signal."""
    return sum(r.status_code >= 500 and r.request.url.path != "/healthz"
               for r in service.responses)


async def _ask_everywhere(service: Service, text: str) -> list[str]:
    """The question on each platform; the answers' text."""
    return [json.dumps(await service.slack(text), ensure_ascii=False),
            json.dumps(await service.telegram(text), ensure_ascii=False),
            json.dumps(await service.feishu(text), ensure_ascii=False)]


async def _tick(service: Service, at: datetime = MONDAY) -> dict[str, str]:
    assert service.services.scheduler is not None
    _mark(service)
    return {r.channel: r.status for r in await service.services.scheduler.tick(at)}


# --- GitHub ----------------------------------------------------------------------------------


async def github_faults(redis_url: str, workdir: Path, name: str,
                        inject: Callable[[Service, int], int],
                        expected_wait: Callable[[int], float] | None) -> Row:
    """Before each question (and before the weekly posts) `inject` scripts faults on the
    fake GitHub and returns how many answers it spoiled; every question must still be
    answered with data, and the waits must be the ones the answers asked for."""
    row = Row(name)
    with world() as fakes:
        async with service_in_process(fakes, redis_url, workdir) as service:
            for index, question in enumerate(QUESTIONS):
                if question in ("help", "topics"):
                    continue
                row.faults += inject(service, index)
                before = len(service.sleeps)
                answers = await _ask_everywhere(service, question)
                row.events += 3
                for answer in answers:
                    if UNAVAILABLE in answer or not answer.strip("[]"):
                        row.lost += 1
                waits = service.sleeps[before:]
                if expected_wait is not None and waits:
                    wanted = expected_wait(index)
                    if abs(waits[0] - wanted) > 1.5:
                        row.problems.append(f"waited {waits[0]} s, asked {wanted} s")
                if waits:
                    row.recover_s = max(row.recover_s or 0.0, sum(waits))
            row.faults += inject(service, 99)
            statuses = await _tick(service)
            row.events += len(statuses)
            _add_posts(row, service)
            row.bad_5xx = _bad(service)
            row.live = len(fakes.live_mentions())
    return row


def _burst(service: Service, index: int) -> int:
    service.world.github.fail_next(2, 502)
    service.world.github.fail_next(1, 503)
    return 3


def _secondary(service: Service, index: int) -> int:
    service.world.github.rate_limit_next(kind="secondary", retry_after=5,
                                         status=(403, 429)[index % 2])
    return 1


def _primary(service: Service, index: int) -> int:
    service.world.github.rate_limit_next(kind="primary", reset_in=20)
    return 1


def _timeout(service: Service, index: int) -> int:
    service.world.github.stall_next(1, 1.6)  # the config's timeout is 1 s
    return 1


async def github_outage(redis_url: str, workdir: Path) -> Row:
    """GitHub down for good after the week was cached: digests carry the stale-data
    note, PR questions get the cached PR or a clear answer, /healthz is degraded; once
    GitHub is back, the slot it could not build is posted and /healthz is ok."""
    row = Row("GitHub down (stale data)")
    with world() as fakes:
        async with service_in_process(fakes, redis_url, workdir) as service:
            await _ask_everywhere(service, "digest last week")
            await _ask_everywhere(service, "risks for #1201")
            row.events += 6
            cache = Cache(service.services.redis_sync)  # type: ignore[arg-type]
            gone = datetime.now(UTC) - timedelta(minutes=1)
            for week in (WEEK, "2026-W28"):
                entry = cache.get_week(REPO, week, TZ)
                assert entry is not None
                cache.put_week(REPO, week, TZ, msgspec.structs.replace(
                    entry, fetched_at=gone - timedelta(minutes=30), fresh_until=gone), 3600)
            fakes.github.fail_next(100_000, 503)
            before = fakes.github.count()
            for question in ("digest last week", "risks for #1201", "summary #1203"):
                for answer in await _ask_everywhere(service, question):
                    row.events += 1
                    if question.startswith("digest") and STALE_NOTE not in answer:
                        row.problems.append("a digest without the stale-data note")
                    if "#12" not in answer and UNAVAILABLE not in answer:
                        row.lost += 1
            health = (await service.get("/healthz")).json()
            if health["status"] != "degraded":
                row.problems.append(f"/healthz said {health['status']} while GitHub was down")
            statuses = await _tick(service)
            row.events += len(statuses)
            if STALE_NOTE not in json.dumps(fakes.slack.posted("chat.postMessage")):
                row.problems.append("the weekly post lacks the stale-data note")
            fakes.github.recover()
            row.faults = fakes.github.count() - before
            started = time.monotonic()
            await _tick(service, MONDAY + timedelta(minutes=5))
            health = (await service.get("/healthz")).json()
            if health["status"] != "ok":
                row.problems.append("/healthz not ok after GitHub came back")
            row.recover_s = time.monotonic() - started
            _add_posts(row, service)
            row.bad_5xx = _bad(service)
            row.live = len(fakes.live_mentions())
    return row


# --- chat platforms --------------------------------------------------------------------------


async def platform_fault(redis_url: str, workdir: Path, name: str,
                         inject: Callable[[Service], int], *, min_seconds: float = 0.0) -> Row:
    row = Row(name)
    with world() as fakes:
        async with service_in_process(fakes, redis_url, workdir) as service:
            if "token" in name:
                await service.feishu("help")
                row.events += 1
            row.faults = inject(service)
            started = time.monotonic()
            statuses = await _tick(service)
            elapsed = time.monotonic() - started
            failed = [c for c, s in statuses.items() if s != "posted"]
            if failed:  # a later pass, as the loop would make it
                statuses = await _tick(service, MONDAY + timedelta(minutes=3))
                elapsed = time.monotonic() - started
            row.events += len(statuses)
            if "token" in name:  # answers need the renewed token too
                service.world.feishu.tokens.clear()
                row.faults += 1
                if not await service.feishu("help"):
                    row.lost += 1
                row.events += 1
            row.recover_s = elapsed
            if elapsed < min_seconds:
                row.problems.append(f"retried after {elapsed:.2f} s, asked {min_seconds} s")
            _add_posts(row, service)
            row.bad_5xx = _bad(service)
    return row


def _slack_429(service: Service) -> int:
    service.world.slack.fail_next("chat.postMessage", status=429, times=2,
                                  body={"ok": False, "error": "ratelimited"},
                                  headers={"Retry-After": "1"})
    return 2


def _telegram_429(service: Service) -> int:
    service.world.telegram.fail_next("sendMessage", 429, "Too Many Requests: retry after 1",
                                     retry_after=1, times=2)
    return 2


def _feishu_token(service: Service) -> int:
    service.world.feishu.tokens.clear()  # every token issued so far has expired
    return 1


def _feishu_5xx(service: Service) -> int:
    service.world.feishu.fail_next(MESSAGES_PATH, status=503, times=2,
                                   body={"code": 1000, "msg": "service unavailable"})
    return 2


# --- Redis -----------------------------------------------------------------------------------


async def _healthy(service: Service, timeout: float = 60.0) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        answer = await service.get("/healthz")
        if answer.status_code == 200 and answer.json()["redis"]["ok"]:
            return time.monotonic() - started
        await asyncio.sleep(0.05)
    raise RuntimeError("Redis did not come back")


async def _tick_until_done(service: Service, at: datetime) -> None:
    """Passes as `run_forever` makes them: a failed one is followed by another."""
    for attempt in range(5):
        try:
            await _tick(service, at + timedelta(minutes=attempt))
            return
        except redis.RedisError:
            await asyncio.sleep(0.2)


async def redis_restart(workdir: Path, *, mid_post: bool) -> Row:
    row = Row("Redis killed between post and ledger" if mid_post
              else "Redis killed + restarted mid-run")
    with world() as fakes, KillableRedis() as server, contextlib.ExitStack() as stack:
        urls = fakes.urls()
        proxy = None
        if mid_post:
            proxy = stack.enter_context(HoldingProxy(fakes.slack.base_url))
            urls.slack = proxy.base_url
        async with service_in_process(fakes, server.url, workdir, urls=urls) as service:
            scheduler = service.services.scheduler
            assert scheduler is not None
            scheduler.lock_seconds = scheduler.build_lock_seconds = 1.0
            if mid_post:
                assert proxy is not None
                hold = proxy.hold("chat.postMessage", when="after")
                _mark(service)
                first = asyncio.ensure_future(scheduler.tick(MONDAY))
                await asyncio.to_thread(hold.parked.wait, 30)
                server.kill()
                row.faults += 1
                proxy.release()
                await asyncio.sleep(1.0)
                restarted = time.monotonic()
                server.start()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(first, 60)
                await _healthy(service)
                row.recover_s = time.monotonic() - restarted
                await asyncio.sleep(1.2)  # the locks of the failed pass expire
            else:
                await service.slack("subscribe rollout", user=SLACK_ADMIN)
                row.events += 1
                server.kill()
                row.faults += 1
                health = await service.get("/healthz")
                if health.status_code != 503:
                    row.problems.append("/healthz did not say Redis was down")
                for question in ("risks for #1201", "digest last week"):
                    for answer in await _ask_everywhere(service, question):
                        row.events += 1
                        if not answer.strip("[]"):
                            row.lost += 1
                _mark(service)
                with contextlib.suppress(Exception):
                    await scheduler.tick(MONDAY)
                restarted = time.monotonic()
                server.start()
                await _healthy(service)
                row.recover_s = time.monotonic() - restarted
                store = service.services.handler.subscriptions
                if store is None or store.topics(f"slack:{SLACK_CHANNEL}") != {"rollout"}:
                    row.lost += 1
                    row.problems.append("a subscription was lost")
            await _tick_until_done(service, MONDAY + timedelta(minutes=2))
            await _tick_until_done(service, MONDAY + timedelta(minutes=9))
            row.events += 4
            _add_posts(row, service)
            row.bad_5xx = _bad(service)
    return row


# --- SIGKILL mid-post ------------------------------------------------------------------------


def kill_row(redis_url: str, workdir: Path, platform: str, when: str) -> Row:
    what = "lost in flight" if when == "before" else "taken, answer lost"
    row = Row(f"serve SIGKILL mid-post: {platform} post {what}")
    if when == "after" and platform == "telegram":
        # Neither an idempotency key nor a history a bot can read: a message Telegram
        # took just before the kill is sent again by the restarted process
        # (in_doubt="resend"; "hold" would keep it and lose the "before" case instead).
        row.allowed_duplicates = 1
        row.note = "Telegram: no idempotency key, no readable history; the documented window"
    outcome = kill_mid_post({platform: when}, redis_url, workdir)
    row.events = len(outcome.posts)
    row.faults = 1 + outcome.requests_held
    row.recover_s = outcome.recover_seconds
    for count in outcome.posts.values():
        row.expected += 1
        row.delivered += min(count.delivered, 1)
        row.duplicated += count.duplicated
        row.lost += count.lost
    if set(outcome.ledger.values()) != {"posted"}:
        row.problems.append(f"ledger: {outcome.ledger}")
    return row


# --- bad input --------------------------------------------------------------------------------


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
            await service.services.adapters["slack"].drain(10)  # type: ignore[attr-defined]
            await service.services.adapters["feishu"].wait_idle(10)  # type: ignore[attr-defined]
            await asyncio.sleep(1.0)
            after = {"slack": len(fakes.slack.posted("response")),
                     "telegram": len(fakes.telegram.sent()),
                     "feishu": len(fakes.feishu.sent_cards())}
            for name in before:
                answers = after[name] - before[name]
                row.duplicated += max(0, answers - 1)
                row.lost += 1 if answers == 0 else 0
            row.faults += row.events
            row.bad_5xx = _bad(service)
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
                await _ask_everywhere(service, question)
                row.events += 3
            await service.slack("subscribe rollout", user=SLACK_ADMIN)
            statuses = await _tick(service)
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
            _add_posts(row, service)
            row.bad_5xx = _bad(service)
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


# --- the table --------------------------------------------------------------------------------


def print_table(rows: list[Row]) -> None:
    header = (f"{'scenario':<56} {'events':>6} {'faults':>6} {'posts exp/dlv/dup':>17} "
              f"{'lost':>4} {'5xx':>4} {'live':>4} {'recover s':>9}  ok")
    print(header)
    print("-" * len(header))
    for row in rows:
        recover = "-" if row.recover_s is None else f"{row.recover_s:.1f}"
        posts = f"{row.expected}/{row.delivered}/{row.duplicated}"
        verdict = "yes" if row.ok else "NO"
        if row.ok and row.duplicated:
            verdict = "known"
        print(f"{row.scenario[:56]:<56} {row.events:>6} {row.faults:>6} {posts:>17} "
              f"{row.lost:>4} {row.bad_5xx:>4} {row.live:>4} {recover:>9}  {verdict}")
        for problem in row.problems:
            print(f"    ! {problem}")
        if row.note:
            print(f"    ({row.note})")
    total = Row("total")
    for row in rows:
        for name in ("events", "faults", "expected", "delivered", "duplicated", "lost",
                     "bad_5xx", "live"):
            setattr(total, name, getattr(total, name) + getattr(row, name))
    print("-" * len(header))
    print(f"{'total':<56} {total.events:>6} {total.faults:>6} "
          f"{f'{total.expected}/{total.delivered}/{total.duplicated}':>17} "
          f"{total.lost:>4} {total.bad_5xx:>4} {total.live:>4}")


async def _in_process(redis_url: str, scratch: Path, only: set[str] | None, fuzz: int,
                      rounds: int) -> list[Row]:
    def dir_for(name: str) -> Path:
        path = scratch / f"{name}-{uuid.uuid4().hex[:6]}"
        path.mkdir()
        return path

    def flush() -> None:
        redis.Redis.from_url(redis_url).flushall()

    plan: list[tuple[str, Callable[[], Awaitable[Row]]]] = [
        ("github", lambda: github_faults(redis_url, dir_for("burst"),
                                         "GitHub 502/503 bursts", _burst, None)),
        ("github", lambda: github_faults(redis_url, dir_for("secondary"),
                                         "GitHub secondary limit (403/429 Retry-After)",
                                         _secondary, lambda i: 5.0)),
        ("github", lambda: github_faults(redis_url, dir_for("primary"),
                                         "GitHub primary limit (remaining 0, reset)",
                                         _primary, lambda i: 21.0)),
        ("github", lambda: github_faults(redis_url, dir_for("timeout"),
                                         "GitHub timeouts", _timeout, lambda i: 1.0)),
        ("github", lambda: github_outage(redis_url, dir_for("outage"))),
        ("platforms", lambda: platform_fault(redis_url, dir_for("slack"),
                                             "Slack 429 Retry-After", _slack_429,
                                             min_seconds=1.0)),
        ("platforms", lambda: platform_fault(redis_url, dir_for("telegram"),
                                             "Telegram 429 retry_after", _telegram_429,
                                             min_seconds=1.0)),
        ("platforms", lambda: platform_fault(redis_url, dir_for("token"),
                                             "Feishu expired tenant token", _feishu_token)),
        ("platforms", lambda: platform_fault(redis_url, dir_for("f5xx"),
                                             "Feishu 5xx", _feishu_5xx)),
        *[("redis", lambda: redis_restart(dir_for("redis"), mid_post=False))] * rounds,
        *[("redis", lambda: redis_restart(dir_for("redis-post"), mid_post=True))] * rounds,
        *[("redis", lambda: notice_blip_row(redis_url))] * rounds,
        ("input", lambda: bad_input(redis_url, dir_for("input"), fuzz)),
        ("input", lambda: hostile_text(redis_url, dir_for("hostile"))),
        ("input", lambda: never_firing_cron_row(redis_url, dir_for("cron"))),
    ]
    rows = []
    for group, run in plan:
        if only and group not in only:
            continue
        flush()
        rows.append(await run())
        print(f"  {rows[-1].scenario}: done", file=sys.stderr)
    return rows


def _workdir(scratch: str, name: str) -> Path:
    path = Path(scratch) / f"{name}-{uuid.uuid4().hex[:6]}"
    path.mkdir()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat the SIGKILL and Redis rows (a soak)")
    parser.add_argument("--fuzz", type=int, default=300, help="random requests per route")
    parser.add_argument("--only", default="",
                        help="comma-separated groups: github, platforms, redis, kill, input")
    args = parser.parse_args()
    # The table is the output; the service's own warnings about the faults injected
    # (retries, refused requests) would only bury it.
    logging.getLogger().addHandler(logging.NullHandler())
    lark = logging.getLogger("Lark")  # lark-oapi prints its own warnings to stdout
    for handler in list(lark.handlers):
        lark.removeHandler(handler)
    only = {name.strip() for name in args.only.split(",") if name.strip()} or None
    started = time.monotonic()
    rows: list[Row] = []
    with private_redis() as redis_url, tempfile.TemporaryDirectory() as scratch:
        rows += asyncio.run(_in_process(redis_url, Path(scratch), only, args.fuzz,
                                        args.rounds))
        if only is None or "input" in only:
            rows.append(hostile_uploads_row(redis_url, _workdir(scratch, "uploads")))
            print(f"  {rows[-1].scenario}: done", file=sys.stderr)
            rows.append(slow_clients_row(_workdir(scratch, "slow")))
            print(f"  {rows[-1].scenario}: done", file=sys.stderr)
            rows += edge_rows(redis_url, Path(scratch))
        if only is None or "kill" in only:
            for _ in range(args.rounds):
                rows.append(crash_after_ack_row(redis_url, _workdir(scratch, "ack")))
                print(f"  {rows[-1].scenario}: done", file=sys.stderr)
                rows.append(early_retries_row(redis_url, _workdir(scratch, "early")))
                print(f"  {rows[-1].scenario}: done", file=sys.stderr)
                for platform in ("slack", "telegram", "feishu"):
                    for when in ("before", "after"):
                        workdir = Path(scratch) / f"kill-{platform}-{when}-{uuid.uuid4().hex[:6]}"
                        workdir.mkdir()
                        rows.append(kill_row(redis_url, workdir, platform, when))
                        print(f"  {rows[-1].scenario}: done", file=sys.stderr)
    print(f"\nprdigest under faults: {len(rows)} scenarios in "
          f"{time.monotonic() - started:.0f} s (fakes and redis-server on 127.0.0.1)\n")
    print_table(rows)
    failed = [row.scenario for row in rows if not row.ok]
    if failed:
        print(f"\n{len(failed)} scenario(s) broke their expectation: {failed}")
        sys.exit(1)


if __name__ == "__main__":
    main()
