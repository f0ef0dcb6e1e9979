"""Merged-PR notices from the GitHub webhook (signed, deduplicated), one per subscribed
channel; topics subscribed in chat count; the PR is read again after its merge."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest

from bot.chat.handler import CommandHandler
from bot.config import ChannelConfig
from bot.delivery.notices import MergeNotifier
from bot.digests import Digests
from bot.github.events import PayloadError, merged_pull, pull_from_api, signature_valid
from bot.models import Command, PullRequest, Reply
from bot.source import SnapshotSource
from bot.store.coordination import Coordination
from bot.store.redis.client import sync_client
from bot.store.redis.subscriptions import RedisSubscriptionStore
from bot.web.app import create_app
from testkit.coordination import claims_on, local_claims
from testkit.fakes.telegram import FakeTelegram
from testkit.server_support import (
    FEISHU,
    REPO,
    SLACK,
    TELEGRAM,
    WEBHOOK_SECRET,
    RecordingAdapter,
    clear_env,
    clock,
    example_config,
    example_snapshot,
    merged_event,
    notices,
    recording_adapters,
    serving,
    snapshot_pull,
    webhook_request,
)
from testkit.server_support import (
    example_channel as channel,
)


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


# --- the webhook --------------------------------------------------------------------------


def test_signature_matches_githubs_documented_example() -> None:
    header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature_valid("It's a Secret to Everybody", b"Hello, World!", header)
    assert not signature_valid("It's a Secret to Everybody", b"Hello, World?", header)
    assert not signature_valid("another secret", b"Hello, World!", header)
    assert not signature_valid("It's a Secret to Everybody", b"Hello, World!", None)
    assert not signature_valid("It's a Secret to Everybody", b"Hello, World!", header[7:])


async def test_a_merge_notifies_each_subscribed_channel_once(
    webhook_app: tuple[Any, dict[str, RecordingAdapter]]
) -> None:
    """#1212 touches trainer, npu and checkpoint: all three channels hear of it, once,
    however often GitHub delivers it."""
    app, adapters = webhook_app
    event = merged_event(snapshot_pull(1212))
    async with serving(app) as http:
        body, headers = webhook_request(event, delivery="d-1")
        first = await http.post("/github/webhook", content=body, headers=headers)
        again = await http.post("/github/webhook", content=body, headers=headers)
        body, headers = webhook_request(event, delivery="d-2")  # a redelivery, new GUID
        other = await http.post("/github/webhook", content=body, headers=headers)
        scraped = (await http.get("/metrics")).text
    assert first.status_code == 200
    assert sorted(first.json()["notified"]) == sorted([SLACK, TELEGRAM, FEISHU])
    assert again.json() == {"duplicate": True}
    assert other.json() == {"duplicate": True}  # the same merge: not even read again
    assert notices(adapters) == [("feishu", "oc_0123456789abcdef", 1212),
                                 ("slack", "C0123456", 1212),
                                 ("telegram", "-1001234567890", 1212)]
    assert 'prdigest_notices_posted_total{outcome="ok",platform="slack"} 1.0' in scraped


async def test_the_notice_holds_title_topics_risk_flag_and_link(
    webhook_app: tuple[Any, dict[str, RecordingAdapter]]
) -> None:
    app, adapters = webhook_app
    async with serving(app) as http:
        body, headers = webhook_request(merged_event(snapshot_pull(1201)), delivery="d-1201")
        answer = await http.post("/github/webhook", content=body, headers=headers)
    assert answer.json()["notified"] == [SLACK]  # npu and rollout: only Slack follows them
    (_, reply), = adapters["slack"].replies
    assert reply.kind == "pull" and reply.mode == "merged" and reply.lang == "zh"
    assert reply.pull is not None
    assert reply.pull.state == "merged"
    assert reply.pull.title == "[rollout, npu] feat: paged KV cache for the Ascend rollout engine"
    assert reply.pull.topics[:2] == ("rollout", "npu")
    assert [r.severity for r in reply.pull.risks] == ["high"]
    assert reply.pull.url == "https://github.com/acme/lumen/pull/1201"
    assert reply.pull.notes == ()


async def test_the_notice_reaches_telegram_escaped(
    monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    """Through the real Telegram adapter: a hostile title arrives inert."""
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", WEBHOOK_SECRET)
    hostile = msgspec.structs.replace(
        snapshot_pull(1202), title="[trainer] fix: <b>@all</b> & <!channel> [x](javascript:1)")
    with FakeTelegram() as tg:
        monkeypatch.setenv("TELEGRAM_BOT_TOKEN", tg.token)
        monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "tg-secret")
        snapshot = msgspec.structs.replace(
            example_snapshot(),
            pulls=tuple(hostile if p.number == 1202 else p for p in example_snapshot().pulls))
        app = create_app(example_config(), redis_url=redis_url, source=SnapshotSource(snapshot),
                         clock=clock(), background=False,
                         adapter_overrides={"telegram": {"api_url": tg.base_url}})
        async with serving(app) as http:
            body, headers = webhook_request(merged_event(hostile), delivery="d-hostile")
            answer = await http.post("/github/webhook", content=body, headers=headers)
        sent = tg.sent()
    assert answer.json()["notified"] == [TELEGRAM]
    (message,) = sent
    assert message["chat_id"] == "-1001234567890"
    assert message["parse_mode"] == "HTML"
    text = message["text"]
    assert "&lt;b&gt;@\u2060all&lt;/b&gt; &amp; &lt;!channel&gt;" in text
    assert "<b>@all" not in text
    # The one link is the button under the notice, not the text; the buttons after it
    # run commands (its summary, muting the chat's notices).
    assert "https://github.com/acme/lumen/pull/1202" not in text
    buttons = [b for row in json.loads(message["reply_markup"])["inline_keyboard"] for b in row]
    assert [b.get("url") for b in buttons if "url" in b] == \
        ["https://github.com/acme/lumen/pull/1202"]
    assert buttons[0].get("url") == "https://github.com/acme/lumen/pull/1202"
    assert all("url" in b or b["callback_data"].startswith('["pd1",') for b in buttons)
    assert text.startswith("<b>Merged: #1202 ") and "trainer" in text


@pytest.mark.parametrize(
    ("headers_change", "status"),
    [
        ({"X-Hub-Signature-256": None}, 401),
        ({"X-Hub-Signature-256": "sha256=" + "0" * 64}, 401),
        ({"X-Hub-Signature-256": "sha1=abc"}, 401),
        ({"X-GitHub-Delivery": None}, 400),
    ],
)
async def test_bad_deliveries_are_refused_and_cause_nothing(
    webhook_app: tuple[Any, dict[str, RecordingAdapter]],
    headers_change: dict[str, str | None], status: int,
) -> None:
    app, adapters = webhook_app
    body, headers = webhook_request(merged_event(snapshot_pull(1212)), delivery="d-bad")
    for name, value in headers_change.items():
        if value is None:
            headers.pop(name)
        else:
            headers[name] = value
    async with serving(app) as http:
        answer = await http.post("/github/webhook", content=body, headers=headers)
    assert answer.status_code == status
    assert notices(adapters) == []


async def test_a_body_signed_with_another_secret_or_altered_is_refused(
    webhook_app: tuple[Any, dict[str, RecordingAdapter]]
) -> None:
    app, adapters = webhook_app
    body, headers = webhook_request(merged_event(snapshot_pull(1212)), delivery="d-x",
                                    secret="not the secret")
    _, signed = webhook_request(merged_event(snapshot_pull(1201)), delivery="d-y")
    async with serving(app) as http:
        forged = await http.post("/github/webhook", content=body, headers=headers)
        swapped = await http.post("/github/webhook", content=body, headers=signed)
        garbage = await http.post("/github/webhook", content=b"\xff{",
                                  headers=webhook_request({}, delivery="d-z")[1])
    assert (forged.status_code, swapped.status_code, garbage.status_code) == (401, 401, 401)
    assert notices(adapters) == []


async def test_other_events_and_unmerged_closes_are_ignored(
    webhook_app: tuple[Any, dict[str, RecordingAdapter]]
) -> None:
    app, adapters = webhook_app
    closed = snapshot_pull(1213)
    async with serving(app) as http:
        ping = await http.post("/github/webhook", content=webhook_request(
            {"zen": "Keep it simple."}, delivery="p", event="ping")[0],
            headers=webhook_request({"zen": "Keep it simple."}, delivery="p", event="ping")[1])
        body, headers = webhook_request(merged_event(closed), delivery="c")
        unmerged = await http.post("/github/webhook", content=body, headers=headers)
        body, headers = webhook_request(merged_event(snapshot_pull(1212), action="opened"),
                                        delivery="o")
        opened = await http.post("/github/webhook", content=body, headers=headers)
        body, headers = webhook_request({"action": "created"}, delivery="i", event="issues")
        issue = await http.post("/github/webhook", content=body, headers=headers)
        body, headers = webhook_request({"action": "closed", "pull_request": "nope"},
                                        delivery="m")
        malformed = await http.post("/github/webhook", content=body, headers=headers)
        body, headers = webhook_request(merged_event(snapshot_pull(1212), repo="evil/repo"),
                                        delivery="e")
        elsewhere = await http.post("/github/webhook", content=body, headers=headers)
    assert ping.status_code == 200
    assert (unmerged.status_code, opened.status_code, issue.status_code) == (202, 202, 202)
    assert malformed.status_code == 400
    assert elsewhere.json() == {"notified": [], "failed": []}
    assert notices(adapters) == []


async def test_without_a_secret_the_webhook_is_off(redis_url: str) -> None:
    adapters = recording_adapters()
    app = create_app(example_config(), redis_url=redis_url,
                     source=SnapshotSource(example_snapshot()), clock=clock(), background=False,
                     adapters=adapters)
    body, headers = webhook_request(merged_event(snapshot_pull(1212)), delivery="d")
    async with serving(app) as http:
        answer = await http.post("/github/webhook", content=body, headers=headers)
    assert answer.status_code == 404
    assert notices(adapters) == []


async def test_a_failed_post_is_retried_by_the_next_delivery_only_for_that_channel(
    webhook_app: tuple[Any, dict[str, RecordingAdapter]]
) -> None:
    app, adapters = webhook_app
    adapters["feishu"].fail = True
    event = merged_event(snapshot_pull(1212))
    async with serving(app) as http:
        body, headers = webhook_request(event, delivery="d-1")
        first = await http.post("/github/webhook", content=body, headers=headers)
        adapters["feishu"].fail = False
        again = await http.post("/github/webhook", content=body, headers=headers)
    assert first.json()["failed"] == [FEISHU]
    assert again.json() == {"notified": [FEISHU], "failed": []}
    assert notices(adapters) == [("feishu", "oc_0123456789abcdef", 1212),
                                 ("slack", "C0123456", 1212),
                                 ("telegram", "-1001234567890", 1212)]


async def test_two_replicas_seeing_one_merge_send_one_notice_per_channel(
    port: Coordination
) -> None:
    config = example_config()
    sent: list[tuple[str, int]] = []

    class Sender:
        def can_send(self, channel: ChannelConfig) -> bool:
            return True

        async def send(self, channel: ChannelConfig, reply: Reply, *,
                       thread: str | None = None, key: str | None = None) -> list[str]:
            await asyncio.sleep(0)  # another replica may go on meanwhile
            assert reply.pull is not None
            sent.append((channel.key, reply.pull.number))
            return ["m"]

    replicas = [MergeNotifier(Digests(config, SnapshotSource(example_snapshot())),
                              claims_on(port), Sender()) for _ in range(4)]
    pull = snapshot_pull(1212)
    await asyncio.gather(*(r.announce(REPO, pull) for r in replicas for _ in range(3)))
    assert sorted(sent) == [(FEISHU, 1212), (SLACK, 1212), (TELEGRAM, 1212)]


def test_payload_parsing_is_strict_where_it_matters() -> None:
    event = merged_event(snapshot_pull(1212))
    found = merged_pull(event)
    assert found is not None and found.repository == REPO
    assert found.pull.state == "merged" and found.pull.reviews is None
    with pytest.raises(PayloadError, match="number"):
        pull_from_api({**event["pull_request"], "number": "1212"})
    with pytest.raises(PayloadError, match="merged_at"):
        pull_from_api({**event["pull_request"], "merged_at": "yesterday"})
    with pytest.raises(PayloadError, match="merged_at"):
        merged_pull({**event, "pull_request": {**event["pull_request"], "merged_at": None}})


async def test_subscribed_topics_from_chat_get_notices_too(redis_url: str) -> None:
    config = example_config()
    store = RedisSubscriptionStore(sync_client(redis_url))
    handler = CommandHandler(Digests(config, SnapshotSource(example_snapshot()),
                                     subscriptions=store, clock=clock()))
    reply = await handler.handle(Command(kind="subscribe", lang="en", topics=("config",),
                                         text="subscribe config"),
                                 channel=channel(TELEGRAM), user="someone")
    assert reply.kind == "subscribed"
    adapters = recording_adapters()
    from adapters.poster import AdapterNotices

    notifier = MergeNotifier(Digests(config, SnapshotSource(example_snapshot()),
                                     subscriptions=store), local_claims(),
                             AdapterNotices(adapters))
    result = await notifier.announce(REPO, snapshot_pull(1205))  # [config]
    assert result.notified == [TELEGRAM]


async def test_a_merge_drops_the_cached_copy_before_the_notice_reads_the_pr() -> None:
    """The notice (and later questions) see the PR as merged, not a copy from before."""
    config = example_config()
    calls: list[tuple[str, int]] = []

    class CachingSource(SnapshotSource):
        def forget_pull(self, repo: str, number: int) -> None:
            calls.append(("forget", number))

        def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
            calls.append(("fetch", number))
            return super().fetch_pull(repo, number)

    class Sender:
        def can_send(self, channel: ChannelConfig) -> bool:
            return True

        async def send(self, channel: ChannelConfig, reply: Reply, *,
                       thread: str | None = None, key: str | None = None) -> list[str]:
            return ["m"]

    notifier = MergeNotifier(Digests(config, CachingSource(example_snapshot())), local_claims(),
                             Sender())
    result = await notifier.announce(REPO, snapshot_pull(1212))
    assert result.notified
    assert calls == [("forget", 1212), ("fetch", 1212)]
