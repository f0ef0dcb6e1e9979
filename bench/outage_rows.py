"""Rows of `bench/faults.py` for faults of the services the bot depends on: GitHub
(5xx bursts, secondary and primary rate limits, timeouts, a long outage) and the chat
platforms (Slack and Telegram 429s, Feishu's expired tenant token and 5xx)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from bench.fault_counts import MONDAY, add_posts, ask_everywhere, bad_responses, tick
from bench.fault_rows import Row
from testkit.fakes.feishu import MESSAGES_PATH
from testkit.reliability.harness import Service, service_in_process
from testkit.reliability.names import REPO, TZ, WEEK
from testkit.reliability.stale_cache import age_cached_weeks
from testkit.reliability.world import world

UNAVAILABLE = "could not get the data from GitHub"
STALE_NOTE = "GitHub could not be reached; this digest uses data cached"
QUESTIONS = ("risks for #1201", "summary #1203", "digest last week", "#1208 有什么风险",
             "topics", "help")


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
                answers = await ask_everywhere(service, question)
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
            statuses = await tick(service)
            row.events += len(statuses)
            add_posts(row, service)
            row.bad_5xx = bad_responses(service)
            row.live = len(fakes.live_mentions())
    return row


def burst(service: Service, index: int) -> int:
    service.world.github.fail_next(2, 502)
    service.world.github.fail_next(1, 503)
    return 3


def secondary_limit(service: Service, index: int) -> int:
    service.world.github.rate_limit_next(kind="secondary", retry_after=5,
                                         status=(403, 429)[index % 2])
    return 1


def primary_limit(service: Service, index: int) -> int:
    service.world.github.rate_limit_next(kind="primary", reset_in=20)
    return 1


def timeouts(service: Service, index: int) -> int:
    service.world.github.stall_next(1, 1.6)  # the config's timeout is 1 s
    return 1


async def github_outage(redis_url: str, workdir: Path) -> Row:
    """GitHub down for good after the week was cached: digests carry the stale-data
    note, PR questions get the cached PR or a clear answer, /healthz is degraded; once
    GitHub is back, the slot it could not build is posted and /healthz is ok."""
    row = Row("GitHub down (stale data)")
    with world() as fakes:
        async with service_in_process(fakes, redis_url, workdir) as service:
            service.services.process.clock.set(MONDAY)  # type: ignore[attr-defined]
            await ask_everywhere(service, "digest last week")
            await ask_everywhere(service, "risks for #1201")
            row.events += 6
            assert service.services.cache is not None
            age_cached_weeks(service.services.cache,
                             REPO, WEEK, "2026-W28", TZ, service.services.process.clock.now())
            fakes.github.fail_next(100_000, 503)
            before = fakes.github.count()
            for question in ("digest last week", "risks for #1201", "summary #1203"):
                for answer in await ask_everywhere(service, question):
                    row.events += 1
                    if question.startswith("digest") and STALE_NOTE not in answer:
                        row.problems.append("a digest without the stale-data note")
                    if "#12" not in answer and UNAVAILABLE not in answer:
                        row.lost += 1
            health = (await service.get("/healthz")).json()
            if health["status"] != "degraded":
                row.problems.append(f"/healthz said {health['status']} while GitHub was down")
            statuses = await tick(service)
            row.events += len(statuses)
            if STALE_NOTE not in json.dumps(fakes.slack.posted("chat.postMessage")):
                row.problems.append("the weekly post lacks the stale-data note")
            fakes.github.recover()
            row.faults = fakes.github.count() - before
            started = time.monotonic()
            await tick(service, MONDAY + timedelta(minutes=5))
            health = (await service.get("/healthz")).json()
            if health["status"] != "ok":
                row.problems.append("/healthz not ok after GitHub came back")
            row.recover_s = time.monotonic() - started
            add_posts(row, service)
            row.bad_5xx = bad_responses(service)
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
            statuses = await tick(service)
            elapsed = time.monotonic() - started
            failed = [c for c, s in statuses.items() if s != "posted"]
            if failed:  # a later pass, as the loop would make it
                statuses = await tick(service, MONDAY + timedelta(minutes=3))
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
            add_posts(row, service)
            row.bad_5xx = bad_responses(service)
    return row


def slack_429(service: Service) -> int:
    service.world.slack.fail_next("chat.postMessage", status=429, times=2,
                                  body={"ok": False, "error": "ratelimited"},
                                  headers={"Retry-After": "1"})
    return 2


def telegram_429(service: Service) -> int:
    service.world.telegram.fail_next("sendMessage", 429, "Too Many Requests: retry after 1",
                                     retry_after=1, times=2)
    return 2


def feishu_token(service: Service) -> int:
    service.world.feishu.tokens.clear()  # every token issued so far has expired
    return 1


def feishu_5xx(service: Service) -> int:
    service.world.feishu.fail_next(MESSAGES_PATH, status=503, times=2,
                                   body={"code": 1000, "msg": "service unavailable"})
    return 2
