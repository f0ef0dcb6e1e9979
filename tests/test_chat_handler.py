"""The command handler (`bot.chat.handler`): the data each command answers with, and every
refusal as a table, over the hand-built week of `testkit.chat_week`."""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from typing import Any

import msgspec
import pytest

from bot.chat.grammar import parse_command
from bot.chat.handler import ERROR_KEYS, CommandHandler
from bot.clock import HeldClock
from bot.config import ChannelConfig
from bot.digests import Digests
from bot.errors import SourceError
from bot.models import PullRequest, Reply, Snapshot
from testkit.chat_week import (
    ADMIN_CHANNEL,
    CONFIG,
    NOW,
    OPEN_CHANNEL,
    REPO,
    SHANGHAI,
    SNAPSHOT,
    THREAD_URL,
    at,
    pull,
)
from testkit.fakes.chat import InMemorySubscriptionStore, RecordingSource


@pytest.fixture
def source() -> RecordingSource:
    return RecordingSource(SNAPSHOT)


@pytest.fixture
def store() -> InMemorySubscriptionStore:
    return InMemorySubscriptionStore()


@pytest.fixture
def handler(source: RecordingSource, store: InMemorySubscriptionStore) -> CommandHandler:
    return CommandHandler(Digests(CONFIG, source, subscriptions=store, clock=HeldClock(NOW)))


async def ask(
    handler: CommandHandler,
    text: str,
    *,
    channel: ChannelConfig | None = OPEN_CHANNEL,
    user: str | None = "U_ALICE",
) -> Reply:
    return await handler.handle(parse_command(text), channel=channel, user=user)


# --- PRs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["risks for #7035", "#7035 有什么风险", "风险 verl-project/verl#7035"]
)
async def test_risks_answer_the_pull_with_its_unresolved_thread(
    handler: CommandHandler, text: str
) -> None:
    reply = await ask(handler, text)
    assert (reply.kind, reply.mode) == ("pull", "risks")
    assert reply.pull is not None
    assert (reply.pull.number, reply.pull.repository) == (7035, REPO)
    assert [r.evidence_url for r in reply.pull.risks] == [THREAD_URL]
    assert reply.pull.risks[0].resolution == "unresolved"


@pytest.mark.parametrize(("text", "lang"), [("summary #6974", "en"), ("总结 #6974", "zh")])
async def test_summary_keeps_the_figures_and_speaks_the_users_language(
    handler: CommandHandler, text: str, lang: str
) -> None:
    reply = await ask(handler, text)
    assert (reply.kind, reply.mode, reply.lang) == ("pull", "summary", lang)
    assert reply.pull is not None
    assert "2-3x" in reply.pull.summary
    assert reply.pull.risks == ()


async def test_the_repository_name_is_matched_without_case(handler: CommandHandler) -> None:
    reply = await ask(handler, "risks Verl-Project/VERL#7035")
    assert reply.kind == "pull"


async def test_source_calls_run_off_the_event_loop(
    handler: CommandHandler, source: RecordingSource
) -> None:
    await ask(handler, "risks 7035")
    await ask(handler, "digest")
    assert source.threads
    assert threading.get_ident() not in source.threads


class HoldingSource(RecordingSource):
    """A source holding some PRs in memory; `held_error` makes the memory lookup fail."""

    def __init__(self, snapshot: Snapshot, held: set[int]) -> None:
        super().__init__(snapshot)
        self.held = held
        self.held_calls: list[tuple[str, int, int]] = []
        self.held_error: Exception | None = None

    def held_pull(self, repo: str, number: int) -> PullRequest | None:
        self.held_calls.append((repo, number, threading.get_ident()))
        if self.held_error is not None:
            raise self.held_error
        return self.fetch_pull(repo, number) if number in self.held else None


async def test_a_held_pr_is_answered_on_the_loop_without_fetching() -> None:
    source = HoldingSource(SNAPSHOT, held={7035})
    handler = CommandHandler(Digests(CONFIG, source, clock=HeldClock(NOW)))
    reply = await ask(handler, "risks 7035")
    assert reply.kind == "pull" and reply.pull is not None and reply.pull.number == 7035
    # held_pull ran on the event loop's thread; the one fetch_pull is its own lookup
    assert source.held_calls == [(REPO, 7035, threading.get_ident())]
    assert source.threads == {threading.get_ident()}

    source.threads.clear()
    reply = await ask(handler, "summary 6974")
    assert reply.kind == "pull" and reply.pull is not None and reply.pull.number == 6974
    assert source.threads and threading.get_ident() not in source.threads


async def test_the_same_pr_version_is_answered_once_per_language(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import bot.digests

    calls: list[tuple[int, str]] = []
    real = bot.digests.answer_pull

    def counting(pull: PullRequest, **options: Any) -> Any:
        calls.append((pull.number, options["lang"]))
        return real(pull, **options)

    monkeypatch.setattr(bot.digests, "answer_pull", counting)
    source = RecordingSource(SNAPSHOT)
    handler = CommandHandler(Digests(CONFIG, source, clock=HeldClock(NOW)))
    first = await ask(handler, "risks 7035")
    assert await ask(handler, "summary 7035") == Reply(
        kind="pull", lang="en", pull=first.pull, mode="summary")
    await ask(handler, "#7035 有什么风险")
    assert calls == [(7035, "en"), (7035, "zh")]
    # a new version of the PR (GitHub changed it) is a new answer
    changed = msgspec.structs.replace(SNAPSHOT.pulls[0], title="[ci] chore: renamed")
    source._by_number[7035] = changed
    renamed = await ask(handler, "risks 7035")
    assert renamed.pull is not None and "renamed" in renamed.pull.title
    assert calls[-1] == (7035, "en") and len(calls) == 3


async def test_a_failing_memory_lookup_falls_back_to_the_source(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = HoldingSource(SNAPSHOT, held={7035})
    source.held_error = RuntimeError("corrupt entry")
    handler = CommandHandler(Digests(CONFIG, source, clock=HeldClock(NOW)))
    with caplog.at_level(logging.ERROR):
        reply = await ask(handler, "risks 7035")
    assert reply.kind == "pull" and reply.pull is not None and reply.pull.number == 7035
    assert source.pull_calls[-1] == (REPO, 7035)
    assert "corrupt entry" in caplog.text


async def test_reviews_are_judged_only_where_the_snapshot_recorded_them() -> None:
    unrecorded = Snapshot(repository=REPO, pulls=(
        pull(5, "[ci] fix: flaky test", state="merged", merged_at=at(15)),))
    handler = CommandHandler(Digests(CONFIG, RecordingSource(unrecorded), clock=HeldClock(NOW)))
    reply = await ask(handler, "risks 5")
    assert reply.pull is not None
    assert [r.kind for r in reply.pull.risks] == []
    assert reply.pull.notes  # says reviews were not recorded


# --- digest ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "week", "numbers"),
    [
        ("digest", "2026-W30", {7120}),
        ("digest this week", "2026-W30", {7120}),
        ("本周周报", "2026-W30", {7120}),
        ("digest last week", "2026-W29", {7035, 6974, 7100}),
        ("上周周报", "2026-W29", {7035, 6974, 7100}),
        ("digest 2026-W29", "2026-W29", {7035, 6974, 7100}),
        ("周报 2026-W28", "2026-W28", {7001}),
        ("digest 2026-07-09", "2026-W28", {7001}),
    ],
)
async def test_digest_of_the_named_week(
    handler: CommandHandler, text: str, week: str, numbers: set[int]
) -> None:
    reply = await ask(handler, text)
    assert reply.kind == "digest"
    assert reply.digest is not None
    assert reply.digest.week == week
    assert reply.digest.counts.total == len(numbers)
    assert {k.number for k in reply.digest.key_pulls} <= numbers


async def test_digest_counts_of_a_week(handler: CommandHandler) -> None:
    reply = await ask(handler, "digest 2026-W29")
    assert reply.digest is not None
    counts = reply.digest.counts
    assert (counts.total, counts.merged, counts.closed, counts.opened) == (3, 2, 0, 1)
    assert reply.digest.lang == "en"


async def test_the_week_is_read_in_the_channels_time_zone(source: RecordingSource) -> None:
    # Monday 01:00 in Shanghai is still Sunday in UTC: "this week" differs.
    monday = datetime(2026, 7, 20, 1, 0, tzinfo=SHANGHAI)
    handler = CommandHandler(Digests(CONFIG, source, clock=HeldClock(monday)))
    utc_channel = ChannelConfig(platform="slack", id="C9", repo=REPO, timezone="UTC")
    in_shanghai = await ask(handler, "digest", channel=OPEN_CHANNEL)
    in_utc = await ask(handler, "digest", channel=utc_channel)
    assert in_shanghai.digest is not None and in_utc.digest is not None
    assert (in_shanghai.digest.week, in_utc.digest.week) == ("2026-W30", "2026-W29")


async def test_subscribed_topics_come_first_in_the_digest(
    handler: CommandHandler, store: InMemorySubscriptionStore
) -> None:
    plain = await ask(handler, "digest 2026-W29", channel=ADMIN_CHANNEL)
    assert plain.digest is not None
    assert plain.digest.topics[0].name != "trainer"
    store.add(ADMIN_CHANNEL.key, ["trainer"])
    focused = await ask(handler, "digest 2026-W29", channel=ADMIN_CHANNEL)
    assert focused.digest is not None
    assert focused.digest.topics[0].name == "trainer"


async def test_a_stale_week_says_so_in_the_digest(
    handler: CommandHandler, source: RecordingSource
) -> None:
    source.stale_age = 600
    reply = await ask(handler, "digest last week")
    assert reply.digest is not None
    assert any("10" in note and "GitHub" in note for note in reply.digest.notes)


async def test_a_digest_is_given_while_the_subscription_store_is_down(
    handler: CommandHandler, store: InMemorySubscriptionStore
) -> None:
    store.fail = True
    reply = await ask(handler, "digest 2026-W29")
    assert reply.digest is not None
    assert reply.digest.topics[0].name == "npu"  # the configured topic still comes first


async def test_a_digest_without_the_previous_week_is_still_given(
    handler: CommandHandler, source: RecordingSource
) -> None:
    source.fail_weeks = {"2026-W28"}
    reply = await ask(handler, "digest 2026-W29")
    assert reply.kind == "digest"
    assert "2026-W28" in source.week_calls


# --- topics and subscriptions ---------------------------------------------------------


async def test_topics_lists_the_subscribed_and_the_available(
    handler: CommandHandler, store: InMemorySubscriptionStore
) -> None:
    store.add(OPEN_CHANNEL.key, ["rollout"])
    reply = await ask(handler, "topics")
    assert reply.kind == "topics"
    assert reply.topics == ("npu", "rollout")
    # configured first, then title modules busiest first (trainer appears twice)
    assert reply.available_topics[:2] == ("npu", "rollout")
    assert reply.available_topics[2] == "trainer"
    assert set(reply.available_topics) == {"npu", "ci", "ckpt", "rollout", "trainer", "doc"}


async def test_subscribe_and_unsubscribe(
    handler: CommandHandler, store: InMemorySubscriptionStore
) -> None:
    reply = await ask(handler, "订阅 rollout 和 CKPT")
    assert (reply.kind, reply.topics, reply.lang) == ("subscribed", ("rollout", "ckpt"), "zh")
    assert store.by_channel[OPEN_CHANNEL.key] == {"rollout", "ckpt"}
    topics = await ask(handler, "topics")
    assert topics.topics == ("npu", "ckpt", "rollout")
    reply = await ask(handler, "unsubscribe rollout")
    assert (reply.kind, reply.topics) == ("unsubscribed", ("rollout",))
    assert store.by_channel[OPEN_CHANNEL.key] == {"ckpt"}


async def test_admins_may_change_subscriptions(
    handler: CommandHandler, store: InMemorySubscriptionStore
) -> None:
    reply = await ask(handler, "subscribe npu", channel=ADMIN_CHANNEL, user="U_ADMIN")
    assert reply.kind == "subscribed"
    assert store.by_channel[ADMIN_CHANNEL.key] == {"npu"}


async def test_unsubscribing_twice_is_no_error(handler: CommandHandler) -> None:
    first = await ask(handler, "unsubscribe ckpt")
    second = await ask(handler, "unsubscribe ckpt")
    assert (first.kind, second.kind) == ("unsubscribed", "unsubscribed")


async def test_a_known_module_may_be_unsubscribed_after_it_left_the_titles(
    handler: CommandHandler, store: InMemorySubscriptionStore
) -> None:
    store.add(OPEN_CHANNEL.key, ["legacy"])
    reply = await ask(handler, "unsubscribe legacy")
    assert reply.kind == "unsubscribed"
    assert store.by_channel[OPEN_CHANNEL.key] == set()


# --- help -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "lang"), [("help", "en"), ("帮助", "zh")])
async def test_help(handler: CommandHandler, text: str, lang: str) -> None:
    reply = await ask(handler, text)
    assert (reply.kind, reply.lang) == ("help", lang)
    # Its examples as this chat would send them: the newest PR the data holds, the
    # channel's topic, the week before NOW's (2026-W30).
    assert dict(reply.params) == {
        "repository": REPO, "example_pull": str(max(p.number for p in SNAPSHOT.pulls)),
        "example_topics": "npu", "example_week": "2026-W29"}


@pytest.mark.parametrize(("text", "lang"), [("what's up", "en"), ("今天天气怎么样", "zh")])
async def test_text_outside_the_grammar_gets_help_echoing_it(
    handler: CommandHandler, text: str, lang: str
) -> None:
    reply = await ask(handler, text, channel=None)
    assert (reply.kind, reply.lang) == ("help", lang)
    # No repository to take examples from but the week before NOW's (2026-W30).
    assert dict(reply.params) == {"text": text, "example_week": "2026-W29"}


async def test_a_long_unknown_text_is_echoed_short(handler: CommandHandler) -> None:
    reply = await ask(handler, "blah " * 100)
    assert len(dict(reply.params)["text"]) <= 80


# --- refusals and errors --------------------------------------------------------------

# (text, channel, user, source failure, error key, params that must be in the reply)
ERRORS: list[tuple[str, ChannelConfig | None, str | None, str, str, dict[str, str]]] = [
    ("risks 7035", None, "U_ALICE", "", "channel-not-configured", {}),
    ("digest", None, "U_ALICE", "", "channel-not-configured", {}),
    ("summary", OPEN_CHANNEL, "U_ALICE", "", "pull-missing", {"command": "summary"}),
    ("总结", OPEN_CHANNEL, "U_ALICE", "", "pull-missing", {"command": "summary"}),
    ("risks #0", OPEN_CHANNEL, "U_ALICE", "", "pull-out-of-range", {"number": "0"}),
    ("risks #99999999999", OPEN_CHANNEL, "U_ALICE", "", "pull-out-of-range",
     {"number": "99999999999"}),
    ("risks #4242", OPEN_CHANNEL, "U_ALICE", "", "pull-not-found",
     {"number": "4242", "repository": REPO}),
    ("risks vllm-project/vllm#7035", OPEN_CHANNEL, "U_ALICE", "", "repo-not-allowed",
     {"repository": "vllm-project/vllm", "allowed": REPO}),
    ("https://github.com/someone/private/pull/1", OPEN_CHANNEL, "U_ALICE", "",
     "repo-not-allowed", {"repository": "someone/private"}),
    ("digest 2026-W60", OPEN_CHANNEL, "U_ALICE", "", "unknown-week",
     {"week": "2026-W60", "year": "2026", "weeks": "53"}),
    ("周报 2025-W53", OPEN_CHANNEL, "U_ALICE", "", "unknown-week",
     {"week": "2025-W53", "weeks": "52"}),
    ("digest 2026-02-30", OPEN_CHANNEL, "U_ALICE", "", "unknown-week", {"week": "2026-02-30"}),
    ("digest 1999-W10", OPEN_CHANNEL, "U_ALICE", "", "unknown-week", {"week": "1999-W10"}),
    ("digest 0000-W01", OPEN_CHANNEL, "U_ALICE", "", "unknown-week", {}),
    ("digest 2026-W31", OPEN_CHANNEL, "U_ALICE", "", "week-in-future",
     {"week": "2026-W31", "current": "2026-W30"}),
    ("subscribe", OPEN_CHANNEL, "U_ALICE", "", "topics-missing", {"command": "subscribe"}),
    ("取消订阅", OPEN_CHANNEL, "U_ALICE", "", "topics-missing", {"command": "unsubscribe"}),
    ("subscribe gpu", OPEN_CHANNEL, "U_ALICE", "", "unknown-topic", {}),
    ("unsubscribe npu", OPEN_CHANNEL, "U_ALICE", "", "topic-configured", {}),
    ("subscribe npu", ADMIN_CHANNEL, "U_ALICE", "", "not-admin", {}),
    ("unsubscribe npu", ADMIN_CHANNEL, None, "", "not-admin", {}),
    ("subscribe npu", OPEN_CHANNEL, "U_ALICE", "store", "subscriptions-failed", {}),
    ("topics", OPEN_CHANNEL, "U_ALICE", "store", "subscriptions-failed", {}),
    ("risks 7035", OPEN_CHANNEL, "U_ALICE", "source", "source-unavailable", {}),
    ("digest", OPEN_CHANNEL, "U_ALICE", "source", "source-unavailable", {}),
    ("subscribe gpu", OPEN_CHANNEL, "U_ALICE", "source", "source-unavailable", {}),
    ("risks 7035", OPEN_CHANNEL, "U_ALICE", "bug", "internal-error", {}),
    ("topics", OPEN_CHANNEL, "U_ALICE", "bug", "internal-error", {}),
]


@pytest.mark.parametrize(
    ("text", "channel", "user", "failure", "key", "params"),
    ERRORS,
    ids=[f"{e[0]}-{e[4]}" for e in ERRORS],
)
async def test_errors(
    handler: CommandHandler,
    source: RecordingSource,
    store: InMemorySubscriptionStore,
    caplog: pytest.LogCaptureFixture,
    text: str,
    channel: ChannelConfig | None,
    user: str | None,
    failure: str,
    key: str,
    params: dict[str, str],
) -> None:
    if failure == "source":
        source.error = SourceError("rate limited; token GITHUB_TOKEN")
    elif failure == "bug":
        source.error = RuntimeError("boom")
    elif failure == "store":
        store.fail = True
    with caplog.at_level(logging.INFO):
        reply = await ask(handler, text, channel=channel, user=user)
    assert (reply.kind, reply.error) == ("error", key)
    assert key in ERROR_KEYS
    assert params.items() <= dict(reply.params).items()
    assert reply.lang == parse_command(text).lang
    # Setup details stay in the log, never in the reply.
    assert "GITHUB_TOKEN" not in repr(reply)
    if failure in ("source", "bug", "store"):
        assert caplog.records


async def test_an_unknown_topic_lists_the_known_ones(handler: CommandHandler) -> None:
    reply = await ask(handler, "subscribe gpu npu")
    assert reply.error == "unknown-topic"
    assert reply.topics == ("gpu",)
    assert {"npu", "ci", "ckpt", "rollout", "trainer", "doc"} <= set(reply.available_topics)


async def test_a_refused_change_changes_nothing(
    handler: CommandHandler, store: InMemorySubscriptionStore
) -> None:
    store.add(OPEN_CHANNEL.key, ["rollout"])
    reply = await ask(handler, "unsubscribe rollout npu")
    assert reply.error == "topic-configured"
    assert reply.topics == ("npu",)
    assert store.by_channel[OPEN_CHANNEL.key] == {"rollout"}
    reply = await ask(handler, "subscribe ckpt gpu")
    assert reply.error == "unknown-topic"
    assert store.by_channel[OPEN_CHANNEL.key] == {"rollout"}


async def test_without_a_store_subscriptions_are_refused_but_topics_answer(
    source: RecordingSource,
) -> None:
    handler = CommandHandler(Digests(CONFIG, source, clock=HeldClock(NOW)))
    assert (await ask(handler, "subscribe npu")).error == "subscriptions-unavailable"
    topics = await ask(handler, "topics")
    assert (topics.kind, topics.topics) == ("topics", ("npu",))


async def test_a_refused_repository_is_never_fetched(
    handler: CommandHandler, source: RecordingSource
) -> None:
    await ask(handler, "risks vllm-project/vllm#7035")
    assert source.pull_calls == []


async def test_a_known_topic_is_accepted_when_only_some_weeks_failed(
    handler: CommandHandler, source: RecordingSource
) -> None:
    source.fail_weeks = {"2026-W30"}
    reply = await ask(handler, "subscribe npu")
    assert reply.kind == "subscribed"
