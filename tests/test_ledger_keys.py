"""What weeks of posts leave in Redis: every key expires (the ledger's index of slots
included), and the index still lists every entry while it lives."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime

from bot.store.ledger import Ledger, LedgerEntry, Slot
from bot.store.redis.coordination import RedisCoordination
from testkit.ledger_years import keys_without_expiry, post_weeks

REDIS_TOPOLOGIES = ("single", "cluster")
"""Each Redis test here runs on one server and on a real Redis Cluster."""


async def test_weeks_of_posts_leave_no_key_without_an_expiry(redis_url: str) -> None:
    counts = await post_weeks(redis_url, weeks=6, channels=9)
    assert counts == Counter({"posted": 6 * 9})
    assert keys_without_expiry(redis_url) == []


async def test_the_index_lists_every_entry_of_every_week(redis_url: str) -> None:
    await post_weeks(redis_url, weeks=3, channels=40)
    port = RedisCoordination.from_url(redis_url)
    try:
        entries = await Ledger(port).entries()
    finally:
        await port.close()
    assert len(entries) == 3 * 40
    assert Counter(e.week for e in entries) == Counter(
        {week: 40 for week in {e.week for e in entries}}) and len({e.week for e in entries}) == 3
    assert all(e.state == "posted" for e in entries)


async def test_an_expired_week_leaves_the_index(redis_url: str) -> None:
    port = RedisCoordination.from_url(redis_url)
    try:
        ledger = Ledger(port, ttl_seconds=1)
        slot = Slot("2026-W29", "slack:C1", "acme/lumen")
        await ledger.record_posted(slot, LedgerEntry(
            state="posted", week=slot.week, channel=slot.channel, repo=slot.repo,
            delivery_key=slot.delivery_key(), posted_at=datetime.now(UTC)))
        assert [e.channel for e in await ledger.entries()] == ["slack:C1"]
        await asyncio.sleep(1.5)
        assert await ledger.entries() == []
        assert await port.client.zcard(ledger.keys.ledger_weeks()) == 0
    finally:
        await port.close()
