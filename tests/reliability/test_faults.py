"""Faults around the running service: GitHub failing, rate limiting and timing out,
each chat platform rate limiting or failing, and what users and channels get meanwhile.

Every case asserts the waits the server asked for were the ones taken, that the
weekly post arrives exactly once, and that a user always gets an answer.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

from testkit.clock import VirtualClock
from testkit.fakes.feishu import MESSAGES_PATH
from testkit.reliability.harness import Service
from testkit.reliability.names import (
    FEISHU_CHAT,
    REPO,
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
from testkit.reliability.stale_cache import age_cached_weeks
from testkit.schedule import tick_at

# Monday 09:05 in Shanghai of 2026-W30: every channel's weekly post for W29 is due.
MONDAY = datetime(2026, 7, 20, 1, 5, tzinfo=UTC)
UNAVAILABLE = "I could not get the data from GitHub just now"
STALE_NOTE = "GitHub could not be reached; this digest uses data cached"


def _text(payloads: list[dict[str, object]]) -> str:
    return json.dumps(payloads, ensure_ascii=False)


async def _tick(service: Service, at: datetime = MONDAY) -> dict[str, str]:
    scheduler = service.services.process.scheduler
    assert scheduler is not None
    return {r.channel: r.status for r in await tick_at(scheduler, at)}


def _once_everywhere(service: Service) -> None:
    world = service.world
    for messages in (slack_channel_texts(world.slack, SLACK_CHANNEL),
                     telegram_chat_texts(world.telegram, TELEGRAM_CHAT),
                     feishu_visible(world.feishu, FEISHU_CHAT)):
        count = count_posts(messages)
        assert (count.delivered, count.duplicated, count.lost) == (1, 0, 0), count


# --- GitHub ---------------------------------------------------------------------------------


async def test_a_burst_of_5xx_is_retried_with_backoff(service: Service) -> None:
    service.world.github.fail_next(2, 502)
    service.world.github.fail_next(1, 503)
    answer = _text(await service.slack("digest last week"))
    assert "acme/lumen" in answer and UNAVAILABLE not in answer
    assert service.sleeps[:3] == [1.0, 2.0, 4.0]


async def test_a_secondary_rate_limit_waits_for_retry_after(service: Service) -> None:
    service.world.github.rate_limit_next(kind="secondary", retry_after=7, status=403)
    service.world.github.rate_limit_next(kind="secondary", retry_after=3)  # 429
    answer = _text(await service.slack("risks for #1201"))
    assert "#1201" in answer and UNAVAILABLE not in answer
    assert service.sleeps == [7.0, 3.0]


async def test_a_spent_primary_rate_limit_waits_for_its_reset(service: Service) -> None:
    service.world.github.rate_limit_next(kind="primary", reset_in=20)
    answer = _text(await service.slack("summary #1203"))
    assert "#1203" in answer
    assert len(service.sleeps) == 1 and 19.0 <= service.sleeps[0] <= 22.0


async def test_a_rate_limit_resetting_late_is_a_clear_answer_not_a_wait(
        service: Service) -> None:
    service.world.github.rate_limit_next(kind="primary", reset_in=3600)
    answer = _text(await service.slack("summary #1203"))
    assert UNAVAILABLE in answer
    assert service.sleeps == []


async def test_a_timeout_is_retried(service: Service) -> None:
    service.world.github.stall_next(1, 1.6)  # the config's timeout is 1 s
    answer = _text(await service.slack("risks for #1201"))
    assert "#1201" in answer and UNAVAILABLE not in answer
    assert service.sleeps == [1.0]


async def test_github_down_gets_every_user_a_clear_answer(service: Service) -> None:
    service.world.github.fail_next(10_000, 502)
    for answer in (await service.slack("risks for #1201"), await service.slack("digest"),
                   await service.telegram("/summary 1203"), await service.feishu("digest")):
        text = _text(answer)
        assert UNAVAILABLE in text or "GitHub" in text, text[:300]
        assert "Traceback" not in text and "502" not in text
    health = (await service.get("/healthz")).json()
    assert health["github"]["ok"] is False
    assert health["status"] == "degraded"


async def test_github_staying_down_serves_the_cached_week_with_a_note(
        service: Service) -> None:
    """The week was fetched once; its freshness runs out while GitHub is down: chat
    digests and the weekly posts use the cached copy and say how old it is: all on the
    Monday morning the posts are due."""
    service.services.process.clock.set(MONDAY)  # type: ignore[attr-defined]
    first = _text(await service.slack("digest last week"))
    assert STALE_NOTE not in first
    assert service.services.cache is not None
    age_cached_weeks(service.services.cache,
                     REPO, WEEK, "2026-W28", TZ, service.services.process.clock.now())
    # The week before was read for its trend counts only, kept under its own key.
    assert service.services.cache.get_week(
        REPO, "2026-W28", TZ) is None
    service.world.github.fail_next(10_000, 503)
    again = _text(await service.slack("digest last week"))
    assert STALE_NOTE in again and "31 minutes ago" in again
    statuses = await _tick(service)
    # The private repository's week was never fetched: nothing to serve, tried later.
    assert statuses.pop(f"slack:{SLACK_VAULT_CHANNEL}") == "failed"
    assert set(statuses.values()) == {"posted"}
    assert STALE_NOTE in _text(service.world.slack.posted("chat.postMessage"))
    assert "GitHub" in _text(service.world.telegram.sent())
    health = (await service.get("/healthz")).json()
    assert health["status"] == "degraded" and health["github"]["ok"] is False

    service.world.github.recover()
    later = await _tick(service, MONDAY + timedelta(minutes=5))
    assert later[f"slack:{SLACK_VAULT_CHANNEL}"] == "posted"
    health = (await service.get("/healthz")).json()
    assert health["status"] == "ok" and health["github"]["ok"] is True
    _once_everywhere(service)


# --- chat platforms -------------------------------------------------------------------------


async def test_slack_429_is_retried_after_retry_after_and_posted_once(
        service: Service) -> None:
    service.world.slack.fail_next("chat.postMessage", status=429,
                                  body={"ok": False, "error": "ratelimited"},
                                  headers={"Retry-After": "1"})
    started = time.monotonic()
    statuses = await _tick(service)
    assert time.monotonic() - started >= 1.0
    assert set(statuses.values()) == {"posted"}
    _once_everywhere(service)


async def test_telegram_429_is_retried_after_retry_after_and_posted_once(
        service: Service) -> None:
    service.world.telegram.fail_next("sendMessage", 429, "Too Many Requests: retry after 1",
                                     retry_after=1)
    started = time.monotonic()
    statuses = await _tick(service)
    assert time.monotonic() - started >= 1.0
    assert set(statuses.values()) == {"posted"}
    _once_everywhere(service)


async def test_an_expired_feishu_tenant_token_is_renewed(service: Service) -> None:
    """Feishu tokens live two hours; one that expired is refused with 99991663 and a
    new one must be fetched - for the weekly post and for answers alike."""
    assert await service.feishu("help")
    service.world.feishu.tokens.clear()  # every token issued so far has expired
    statuses = await _tick(service)
    assert statuses[f"feishu:{FEISHU_CHAT}"] == "posted"
    service.world.feishu.tokens.clear()
    assert await service.feishu("help")
    _once_everywhere(service)


async def test_feishu_5xx_is_retried_and_posted_once(service: Service) -> None:
    service.world.feishu.fail_next(MESSAGES_PATH, status=503,
                                   body={"code": 1000, "msg": "service unavailable"}, times=2)
    statuses = await _tick(service)
    assert statuses[f"feishu:{FEISHU_CHAT}"] == "posted"
    _once_everywhere(service)


async def test_a_platform_down_for_a_while_posts_later_once(service: Service) -> None:
    """Slack refuses every post for a while: the slot backs off and is posted on a later
    pass, once; the other channels are not held up."""
    service.world.slack.fail_next("chat.postMessage", status=500, body="oops", times=2)
    statuses = await _tick(service)
    assert statuses[f"slack:{SLACK_CHANNEL}"] == "failed"
    assert statuses[f"slack:{SLACK_VAULT_CHANNEL}"] == "failed"
    assert statuses[f"telegram:{TELEGRAM_CHAT}"] == "posted"
    later = await _tick(service, MONDAY + timedelta(minutes=2))
    assert later[f"slack:{SLACK_CHANNEL}"] == "posted"
    assert later[f"telegram:{TELEGRAM_CHAT}"] == "already-posted"
    _once_everywhere(service)


def test_feishu_tenant_tokens_are_renewed_before_they_expire() -> None:
    """lark-oapi asks the cache to keep a token until ten minutes before Feishu's
    expiry (an absolute time on the machine's clock, as it writes it); past it, the
    next call must fetch a new token. The token ages on the cache's clock."""
    from adapters.feishu.tokens import TenantTokenCache

    clock = VirtualClock()
    cache = TenantTokenCache(clock=clock)
    expiry = int(time.time()) + 6600  # what the SDK writes: now + 2 h - 10 min
    cache.set("self_tenant_token:cli_a", "t-1", expiry)
    cache.set("self_tenant_token:cli_b", "t-2", expiry)
    clock.advance(6598)  # a whole-second expiry keeps up to a second less than 6600
    assert cache.get("self_tenant_token:cli_a") == "t-1"
    clock.advance(2)
    assert cache.get("self_tenant_token:cli_a") == ""
    cache.forget("cli_b")
    assert cache.get("self_tenant_token:cli_b") == ""
    cache.set("self_tenant_token:cli_c", "t-3", int(time.time()) - 1)  # written stale
    assert cache.get("self_tenant_token:cli_c") == ""
