"""Topic aliases: `aliases = ["ckpt"]` on the `checkpoint` topic folds PRs tagged `[ckpt]`
into `checkpoint`, so the digest has one bar where it had two."""

from __future__ import annotations

import msgspec

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.config import ChannelConfig, RepoConfig, TopicRule, parse_config
from bot.digests import Digests
from bot.engine import build_digest
from bot.engine.classify import classify
from bot.source import SnapshotSource
from testkit.fakes.chat import InMemorySubscriptionStore
from testkit.server_support import clock as example_clock
from testkit.server_support import example_config, example_snapshot

REPO = "acme/lumen"


def _config_with_alias() -> RepoConfig:
    raw = msgspec.to_builtins(example_config())
    raw["repos"][REPO]["topics"]["checkpoint"]["aliases"] = ["ckpt"]
    return parse_config(raw).repo(REPO)


def test_a_tag_named_by_an_alias_is_the_topic() -> None:
    pull = next(p for p in example_snapshot().pulls if p.title.startswith("[ckpt]"))
    without = classify(pull, example_config().repo(REPO))
    assert "ckpt" in without.topics and "checkpoint" in without.topics  # the two bars
    folded = classify(pull, _config_with_alias())
    assert "ckpt" not in folded.topics and "ckpt" not in folded.modules
    assert folded.topics.count("checkpoint") == 1


def test_the_digest_counts_alias_and_topic_as_one() -> None:
    """With the alias configured, and without it too: `ckpt` is a common spelling of
    checkpoint (bot.engine.areas), so the digest's topics have one bar either way."""
    snapshot = example_snapshot()
    plain = example_config().repo(REPO)
    either = {p.number for p in snapshot.pulls
              if {"ckpt", "checkpoint"} & set(classify(p, plain).topics)}
    for config in (plain, _config_with_alias()):
        digest = build_digest(snapshot, "2026-W29", repo_config=config, lang="en")
        counts = {t.name: t.count for t in digest.topics}
        assert "ckpt" not in counts
        week = {p.number for p in digest.pulls}
        assert counts["checkpoint"] == len(either & week)


def test_aliases_are_a_config_field() -> None:
    rule = TopicRule(keywords=("checkpoint",), aliases=("ckpt", "ckpts"))
    assert rule.aliases == ("ckpt", "ckpts")


# --- in chat: one topic in `topics`, `subscribe` and the answers -------------------------


def _chat_handler() -> tuple[CommandHandler, InMemorySubscriptionStore, ChannelConfig]:
    raw = msgspec.to_builtins(example_config())
    raw["repos"][REPO]["topics"]["checkpoint"]["aliases"] = ["ckpt"]
    config = parse_config(raw)
    channel = next(c for c in config.channels if c.follows(REPO) and not c.admins)
    store = InMemorySubscriptionStore()
    handler = CommandHandler(Digests(config, SnapshotSource(example_snapshot()),
                                     subscriptions=store, clock=example_clock()))
    return handler, store, channel


async def test_chat_names_an_aliased_topic_once() -> None:
    handler, store, channel = _chat_handler()
    topics = await handler.handle(parse_command("topics"), channel=channel)
    assert "checkpoint" in topics.available_topics and "ckpt" not in topics.available_topics
    subscribed = await handler.handle(parse_command("subscribe ckpt"), channel=channel)
    assert (subscribed.kind, subscribed.topics) == ("subscribed", ("checkpoint",))
    assert store.by_channel[channel.key] == {"checkpoint"}
    both = await handler.handle(parse_command("订阅 ckpt 和 checkpoint"), channel=channel)
    assert both.topics == ("checkpoint",)
    answer = await handler.handle(parse_command("what changed in ckpt last week"),
                                  channel=channel)
    same = await handler.handle(parse_command("what changed in checkpoint last week"),
                                channel=channel)
    assert answer.answer is not None and same.answer is not None
    assert answer.answer.pulls == same.answer.pulls and answer.answer.pulls
    assert answer.answer.area == same.answer.area
