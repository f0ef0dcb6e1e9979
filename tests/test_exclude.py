"""Leaving PRs out: bots, labels and titles a team does not want in its digest, per
repository and per channel, in every count, section, trend and notice."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.clock import HeldClock
from bot.config import ChannelConfig, Config, ExcludeRule, parse_config
from bot.delivery.notices import MergeNotifier
from bot.digests import Digests
from bot.engine import week_pulls
from bot.engine.exclude import left_out_by
from bot.errors import ConfigError
from bot.models import Digest, PullRequest, Reply, Snapshot
from bot.source import SnapshotSource
from testkit.coordination import local_claims
from testkit.server_support import NOW, REPO, example_snapshot

WEEK = "2026-W29"
TZ = "Asia/Shanghai"
BOT_PR, LABELLED_PR, TITLED_PR = 1211, 1207, 1204


def hostile_snapshot() -> Snapshot:
    """The example week with one bot PR, one labelled `skip-digest`, one `[ci]` title."""
    pulls = []
    for pull in example_snapshot().pulls:
        if pull.number == BOT_PR:
            pull = msgspec.structs.replace(pull, author="dependabot[bot]")
        if pull.number == LABELLED_PR:
            pull = msgspec.structs.replace(pull, labels=("Skip-Digest",))
        pulls.append(pull)
    return msgspec.structs.replace(example_snapshot(), pulls=tuple(pulls))


def config(repo_exclude: dict[str, Any] | None = None,
           channel_exclude: dict[str, Any] | None = None) -> Config:
    repo: dict[str, Any] = {"timezone": TZ}
    if repo_exclude is not None:
        repo["exclude"] = repo_exclude
    channel: dict[str, Any] = {"platform": "slack", "id": "C1", "repo": REPO, "lang": "en"}
    if channel_exclude is not None:
        channel["exclude"] = channel_exclude
    return parse_config({"repos": {REPO: repo}, "channels": [channel]})


def numbers_in(digest: Digest) -> set[int]:
    """Every PR number the digest names anywhere."""
    text = msgspec.json.encode(digest).decode()
    return {int(n) for n in re.findall(r"#(\d{4})\b|\"(?:number|pull)\":(\d{4})", text)
            for n in n if n} | {n for t in digest.themes for n in t.pulls} \
        | {n for t in digest.topics for n in t.pulls}


async def build(settings: Config, snapshot: Snapshot, lang: str = "en",
                channel: ChannelConfig | None = None) -> Digest:
    digests = Digests(settings, SnapshotSource(snapshot), clock=HeldClock(NOW))
    exclude = (channel.exclude,) if channel is not None else ()
    return await digests.build(REPO, WEEK, lang, exclude=exclude)  # type: ignore[arg-type]


@pytest.mark.parametrize(("table", "field"), [
    ({"repos": {REPO: {"exclude": {"titles": ["(unclosed"]}}}},
     f"repos.{REPO!r}.exclude.titles[0]: not a regular expression"),
    ({"repos": {REPO: {}}, "channels": [{"platform": "slack", "id": "C1", "repo": REPO,
                                         "exclude": {"titles": ["ok", "[z-a]"]}}]},
     "channels[0].exclude.titles[1]: not a regular expression"),
])
def test_a_bad_regular_expression_is_a_config_error_naming_its_field(
        table: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(table)
    assert field in str(caught.value)


def test_unknown_exclude_keys_are_errors() -> None:
    with pytest.raises(ConfigError, match="exclude"):
        parse_config({"repos": {REPO: {"exclude": {"users": ["x"]}}}})


@pytest.mark.parametrize(("rule", "pull", "reason"), [
    (ExcludeRule(authors=("*[bot]",)), {"author": "renovate[bot]"}, "bot"),
    (ExcludeRule(authors=("*[bot]",)), {"author": "robot-fan"}, None),
    (ExcludeRule(authors=("Dependabot[bot]",)), {"author": "dependabot[bot]"}, "bot"),
    (ExcludeRule(authors=("lin-q",)), {"author": "LIN-Q"}, "author"),
    (ExcludeRule(labels=("skip-digest",)), {"labels": ("Skip-Digest",)}, "label"),
    (ExcludeRule(titles=(r"^chore\(deps\)",)), {"title": "chore(deps): bump x"}, "title"),
    (ExcludeRule(titles=(r"^chore\(deps\)",)), {"title": "fix: chore(deps) leftovers"}, None),
])
def test_each_kind_of_rule_leaves_out_what_it_names_and_nothing_else(
        rule: ExcludeRule, pull: dict[str, Any], reason: str | None) -> None:
    fields: dict[str, Any] = {"number": 1, "title": "feat: something", "author": "someone",
                              "url": "https://github.com/acme/lumen/pull/1", "state": "merged"}
    fields.update(pull)
    assert left_out_by(PullRequest(**fields), [rule]) == reason


async def test_left_out_prs_count_nowhere_and_the_digest_says_how_many() -> None:
    snapshot = hostile_snapshot()
    week_numbers = {p.number for p, _ in week_pulls(snapshot, WEEK, TZ)}
    assert {BOT_PR, LABELLED_PR, TITLED_PR} <= week_numbers
    settings = config({"authors": ["*[bot]"], "labels": ["skip-digest"],
                       "titles": [r"^\[ci\] fix"]})
    full = await build(config(), snapshot)
    digest = await build(settings, snapshot)
    assert digest.counts.total == full.counts.total - 3
    assert not numbers_in(digest) & {BOT_PR, LABELLED_PR, TITLED_PR}
    assert {BOT_PR, LABELLED_PR, TITLED_PR} <= numbers_in(full)
    assert ("Left out by the exclude settings: 1 PR by a bot, 1 PR with an excluded label "
            "and 1 PR with an excluded title.") in digest.notes
    zh = await build(settings, snapshot, "zh")
    assert any(note.startswith("按排除设置略去：") for note in zh.notes)


async def test_nothing_left_out_says_nothing() -> None:
    digest = await build(config({"labels": ["no-such-label"]}), hostile_snapshot())
    assert not any("exclude" in note for note in digest.notes)


async def test_a_channels_rules_add_to_the_repositorys() -> None:
    settings = config({"authors": ["*[bot]"]}, {"labels": ["skip-digest"]})
    channel = settings.channels[0]
    digest = await build(settings, hostile_snapshot(), channel=channel)
    assert not numbers_in(digest) & {BOT_PR, LABELLED_PR}
    report = await build(settings, hostile_snapshot())  # the repository's page
    assert LABELLED_PR in numbers_in(report) and BOT_PR not in numbers_in(report)


async def test_asking_about_a_left_out_pr_still_answers_and_says_so() -> None:
    settings = config(None, {"labels": ["skip-digest"]})
    handler = CommandHandler(Digests(settings, SnapshotSource(hostile_snapshot()),
                                     clock=HeldClock(NOW)))
    channel = settings.channels[0]
    asked = await handler.handle(parse_command(f"summary #{LABELLED_PR}"), channel=channel)
    assert asked.kind == "pull" and asked.pull is not None
    assert asked.pull.number == LABELLED_PR
    assert any("left out of digests and notices" in note for note in asked.pull.notes)
    other = await handler.handle(parse_command(f"summary #{BOT_PR}"), channel=channel)
    assert other.pull is not None
    assert not any("left out" in note for note in other.pull.notes)


class Sent:
    def __init__(self) -> None:
        self.replies: list[tuple[str, Reply]] = []

    def can_send(self, channel: ChannelConfig) -> bool:
        return True

    async def send(self, channel: ChannelConfig, reply: Reply, *, thread: str | None = None,
                   key: str | None = None) -> list[str]:
        self.replies.append((channel.key, reply))
        return ["1"]


async def test_a_left_out_pr_gets_no_merge_notice() -> None:
    settings = parse_config({"repos": {REPO: {"timezone": TZ}}, "channels": [
        {"platform": "slack", "id": "C1", "repo": REPO, "topics": ["ci"],
         "exclude": {"authors": ["*[bot]"]}},
        {"platform": "slack", "id": "C2", "repo": REPO, "topics": ["ci"]},
    ]})
    snapshot = hostile_snapshot()
    pull = next(p for p in snapshot.pulls if p.number == BOT_PR)
    sent = Sent()
    notifier = MergeNotifier(Digests(settings, SnapshotSource(snapshot)), local_claims(), sent)
    await notifier.announce(REPO, msgspec.structs.replace(pull, state="merged"))
    assert [key for key, _ in sent.replies] == ["slack:C2"]
