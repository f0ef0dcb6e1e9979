"""A weekly post whose outcome is unknown (the poster died between the platform's
answer and the ledger, or the post failed after Slack took some of it), resolved by
asking Slack: each part of a digest carries its
delivery key in the message metadata, so the next pass finds what arrived, posts only
what is missing, and records the rest - instead of posting the digest twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from adapters.slack import adapter as slack_adapter_module
from bot.config import RepoConfig
from bot.engine import build_digest
from bot.models import Digest
from bot.store.ledger import LedgerEntry, Slot
from testkit.fakes.github_fixtures import build_week, week_snapshot
from testkit.reliability.harness import Service
from testkit.reliability.names import REPO, SLACK_CHANNEL, TZ, WEEK
from testkit.reliability.posts import count_posts, slack_channel_texts
from testkit.schedule import tick_at

MONDAY = datetime(2026, 7, 20, 1, 5, tzinfo=UTC)


def long_digest() -> Digest:
    pulls = build_week(REPO, count=120, week=WEEK, tz=TZ, overflow=None, decoys=0)
    return build_digest(week_snapshot(REPO, pulls, WEEK, TZ), WEEK,
                        repo_config=RepoConfig(timezone=TZ), lang="en")


async def test_a_half_posted_digest_is_completed_not_repeated(
        service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    # Small messages, so that the chat digest takes several parts (it fits one at
    # Slack's own limits): what a half-posted delivery needs.
    real = slack_adapter_module.render_digest_messages
    monkeypatch.setattr(slack_adapter_module, "render_digest_messages",
                        lambda d: real(d, max_chars=700))
    slack = service.services.process.adapters["slack"]
    digest = long_digest()
    started = datetime.now(UTC)
    service.world.slack.fail_next("chat.postMessage", status=500, body="down", after=2)
    try:
        await slack.post_digest(SLACK_CHANNEL, digest,  # type: ignore[call-arg]
                                idempotency_key="pd-test-1")
    except Exception as exc:
        assert f"slack: 2 of {len(real(digest, max_chars=700))} messages posted to " \
            f"{SLACK_CHANNEL};" in str(exc)
    else:
        raise AssertionError("the third part should have failed")
    ids = await slack.complete_delivery(
        SLACK_CHANNEL, digest, idempotency_key="pd-test-1", since=started)
    texts = slack_channel_texts(service.world.slack, SLACK_CHANNEL)
    assert ids is not None and len(ids) == len(texts) >= 4
    assert len(set(texts)) == len(texts)  # every part once
    assert await slack.complete_delivery(
        SLACK_CHANNEL, digest, idempotency_key="pd-other", since=started) is None


async def test_the_scheduler_records_a_delivery_it_finds_instead_of_resending(
        service: Service) -> None:
    """The ledger says `sending` (a replica died after Slack took the digest); the next
    pass finds the digest in the channel and records it."""
    scheduler = service.services.process.scheduler
    assert scheduler is not None
    channel = service.services.config.channel(f"slack:{SLACK_CHANNEL}")
    assert channel is not None
    assert (await tick_at(scheduler, MONDAY))  # every channel posted once
    slot = Slot(WEEK, channel.key, REPO)
    entry = await scheduler.ledger.get(slot)
    assert entry is not None and entry.state == "posted"
    # Rewind the ledger to the moment before the confirmation was written.
    doubt = msgspec.structs.replace(entry, state="sending", posted_at=None, message_ids=(),
                                    replica="dead-replica")
    await scheduler.ledger.record_posted(slot, doubt)
    before = len(slack_channel_texts(service.world.slack, SLACK_CHANNEL))
    results = {r.channel: r for r in await tick_at(scheduler, MONDAY + timedelta(minutes=1))}
    result = results[channel.key]
    assert result.status == "posted" and result.in_doubt
    assert result.detail == "found on the platform; not sent again"
    assert len(slack_channel_texts(service.world.slack, SLACK_CHANNEL)) == before
    assert count_posts(slack_channel_texts(service.world.slack, SLACK_CHANNEL)).duplicated == 0
    recorded = await scheduler.ledger.get(slot)
    assert isinstance(recorded, LedgerEntry) and recorded.state == "posted"
    assert recorded.message_ids == entry.message_ids


async def test_without_history_access_the_policy_decides(service: Service) -> None:
    """A bot without `channels:history` cannot look: the slot is re-sent (the default
    policy), and the log says a digest may have been sent twice."""
    scheduler = service.services.process.scheduler
    assert scheduler is not None
    channel = service.services.config.channel(f"slack:{SLACK_CHANNEL}")
    assert channel is not None
    await tick_at(scheduler, MONDAY)
    slot = Slot(WEEK, channel.key, REPO)
    entry = await scheduler.ledger.get(slot)
    assert entry is not None
    await scheduler.ledger.record_posted(slot, msgspec.structs.replace(
        entry, state="sending", posted_at=None, message_ids=()))
    service.world.slack.fail_next("conversations.history", status=200,
                                  body={"ok": False, "error": "missing_scope"})
    results = {r.channel: r for r in await tick_at(scheduler, MONDAY + timedelta(minutes=1))}
    assert results[channel.key].status == "posted" and results[channel.key].in_doubt
    assert results[channel.key].detail == ""
    assert count_posts(slack_channel_texts(service.world.slack, SLACK_CHANNEL)).duplicated == 1


async def test_a_send_that_failed_part_way_is_completed_on_the_retry_not_repeated(
        service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slack took the first parts of a digest, then failed one: the slot is recorded
    failed, and its retry (same delivery key) finds the parts that arrived and posts
    only the rest. A post that timed out after Slack took it is the same case with
    every part there."""
    real = slack_adapter_module.render_digest_messages
    monkeypatch.setattr(slack_adapter_module, "render_digest_messages",
                        lambda d: real(d, max_chars=700))
    scheduler = service.services.process.scheduler
    assert scheduler is not None
    slack = [c for c in service.services.config.channels if c.platform == "slack"]
    service.world.slack.fail_next("chat.postMessage", status=500, body="down", after=2)
    first = {r.channel: r.status for r in await tick_at(scheduler, MONDAY)}
    assert sorted(first[c.key] for c in slack) == ["failed", "posted"]
    again = {r.channel: r.status for r in await tick_at(scheduler, MONDAY + timedelta(hours=1))}
    assert [again[c.key] for c in slack if first[c.key] == "failed"] == ["posted"]
    for channel in slack:
        texts = slack_channel_texts(service.world.slack, channel.id)
        assert len(set(texts)) == len(texts) > 1, channel.id  # every part once
        entry = await scheduler.ledger.get(Slot(WEEK, channel.key, channel.scope))
        assert entry is not None and entry.state == "posted"
        assert len(entry.message_ids) == len(texts)


async def test_a_post_whose_answer_timed_out_is_found_on_the_retry_not_repeated(
        service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slack took the digest but its answer never came (the client timed out): the slot
    is recorded failed, and the retry finds the digest in the channel."""
    scheduler = service.services.process.scheduler
    assert scheduler is not None
    channel = service.services.config.channel(f"slack:{SLACK_CHANNEL}")
    assert channel is not None
    client = service.services.process.adapters["slack"].outbound.client  # type: ignore[attr-defined]
    real = client.chat_postMessage

    async def taken_then_timed_out(**arguments: object) -> object:
        response = await real(**arguments)
        if arguments.get("channel") == SLACK_CHANNEL:
            monkeypatch.setattr(client, "chat_postMessage", real)  # this once
            raise TimeoutError
        return response

    monkeypatch.setattr(client, "chat_postMessage", taken_then_timed_out)
    first = {r.channel: r.status for r in await tick_at(scheduler, MONDAY)}
    assert first[channel.key] == "failed"
    again = {r.channel: r for r in await tick_at(scheduler, MONDAY + timedelta(hours=1))}
    assert again[channel.key].status == "posted"
    texts = slack_channel_texts(service.world.slack, SLACK_CHANNEL)
    assert count_posts(texts).delivered == 1 and count_posts(texts).duplicated == 0
