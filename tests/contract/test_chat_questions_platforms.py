"""The team's questions on Slack, Telegram and Feishu - the real SDKs against the fakes,
the whole service in-process, the fake GitHub holding the real verl weeks (W29, W30) -
in English and Chinese: each platform's answer names the right PRs, counted from the
snapshot (`testkit.verl_weeks`), not copied from an answer."""

from __future__ import annotations

import html
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
import pytest_asyncio

from bot.models import PullRequest, Snapshot, ThreadComment
from bot.snapshot import read_snapshot
from testkit.reliability.harness import Service, service_in_process
from testkit.reliability.world import World, world
from testkit.verl_weeks import most_active, on_keywords, reviewed, tags, week_of

pytestmark = pytest.mark.realdata

# Two PRs open now: one waiting for review since 07-10, one a draft (not waiting).
WAITING = PullRequest(number=9001, title="[rollout] feat: a PR nobody reviewed yet",
                      url="https://github.com/acme/lumen/pull/9001", state="open",
                      author="newcomer", created_at=datetime(2026, 7, 10, tzinfo=UTC),
                      updated_at=datetime(2026, 7, 10, tzinfo=UTC))
DRAFT = PullRequest(number=9002, title="[ci] wip: a draft", state="open", draft=True,
                    url="https://github.com/acme/lumen/pull/9002", author="newcomer",
                    created_at=datetime(2026, 7, 9, tzinfo=UTC),
                    updated_at=datetime(2026, 7, 9, tzinfo=UTC))
NPU_WORDS = {"npu", "ascend", "hccl"}  # the npu topic of the reliability config


@pytest.fixture(scope="module")
def verl(shared_data: Path) -> Snapshot:
    return read_snapshot(shared_data / "verl-2026-07.json")


def on_github(pull: PullRequest) -> PullRequest:
    """A PR as GitHub serves it: the snapshot does not record when a PR was opened or
    last updated, whether its review threads were resolved, or its comments' links;
    GitHub always says (here: opened when it merged, threads left unresolved)."""
    moment = pull.created_at or pull.merged_at

    def comment(thread: int, index: int, c: ThreadComment) -> ThreadComment:
        return msgspec.structs.replace(
            c, url=c.url or f"{pull.url}#discussion_r{thread}{index}",
            created_at=c.created_at or moment, body=c.body or "")

    threads = tuple(msgspec.structs.replace(
        t, resolved=bool(t.resolved), outdated=bool(t.outdated), path=t.path or "",
        comments=tuple(comment(k, i, c) for i, c in enumerate(t.comments)))
        for k, t in enumerate(pull.review_threads or ()))
    comments = tuple(msgspec.structs.replace(c, created_at=c.created_at or moment)
                     for c in pull.comments or ())
    return msgspec.structs.replace(pull, created_at=moment,
                                   updated_at=pull.updated_at or pull.merged_at,
                                   review_threads=threads, comments=comments)


@pytest.fixture
def fakes(verl: Snapshot) -> Iterator[World]:
    with world(pulls=[*map(on_github, verl.pulls), WAITING, DRAFT]) as started:
        yield started


@pytest_asyncio.fixture(loop_scope="function")
async def service(fakes: World, redis_url: str, tmp_path: Path) -> AsyncIterator[Service]:
    async with service_in_process(fakes, redis_url, tmp_path) as running:
        yield running


Ask = Callable[[Service, str], Awaitable[str]]


async def on_slack(service: Service, text: str) -> str:
    return json.dumps(await service.slack(text), ensure_ascii=False)


async def on_telegram(service: Service, text: str) -> str:
    return json.dumps(await service.telegram(text), ensure_ascii=False)


async def on_feishu(service: Service, text: str) -> str:
    # What a reader sees: card markdown shows a character reference (`&#33;`) as typed.
    return html.unescape(json.dumps(await service.feishu(text), ensure_ascii=False))


PLATFORMS: dict[str, Ask] = {"slack": on_slack, "telegram": on_telegram, "feishu": on_feishu}


def named(answer: str, numbers: set[int]) -> set[int]:
    return {n for n in numbers if f"#{n}" in answer}


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_each_question_in_both_languages(service: Service, verl: Snapshot,
                                               platform: str) -> None:
    ask = PLATFORMS[platform]
    this, last = week_of(verl, "2026-W30"), week_of(verl, "2026-W29")
    every = {p.number for p in verl.pulls}

    # The week's risks: of W30's reviewed PRs (#7083, #6556) only #6556 has one.
    assert reviewed(this) == {7083, 6556}
    for text in ("哪些 PR 有风险", "show me the risky PRs"):
        answer = await ask(service, text)
        assert named(answer, every) == {6556}, (platform, text)

    # An area's changes: the npu topic's PRs of this week (ten shown, the count said).
    npu = on_keywords(this, NPU_WORDS)
    for text in ("what changed in npu this week?", "npu 本周"):
        answer = await ask(service, text)
        shown = named(answer, every)
        assert shown <= npu and len(shown) == min(len(npu), 10), (platform, text)
        assert str(len(npu)) in answer
    rollout = {p.number for p in this if "rollout" in tags(p)}
    for text in ("本周 rollout 有什么变化", "what changed in rollout"):
        assert rollout <= named(await ask(service, text), every), (platform, text)

    # People: the week's most active author, named.
    leaders, _most, _ = most_active(this)
    for text in ("who merged the most this week", "本周谁合并的 PR 最多"):
        answer = await ask(service, text)
        assert any(login in answer for login in leaders), (platform, text)

    # This week against the last: 24 PRs against 28 (the data's README).
    assert (len(this), len(last)) == (24, 28)
    for text in ("上周和这周比怎么样", "how does this week compare to last week"):
        answer = await ask(service, text)
        assert "24" in answer and "28" in answer, (platform, text)

    # Waiting for review: GitHub's open PRs, drafts left out.
    for text in ("what is waiting for review", "待 review 的 PR"):
        answer = await ask(service, text)
        assert "#9001" in answer and "#9002" not in answer, (platform, text)

    # Greetings: an introduction and the help, in the asker's language.
    assert "Hello! I am prdigest" in await ask(service, "hello")
    assert "你好！我是 prdigest" in await ask(service, "你好")


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_the_review_queue_is_one_search_per_chat_and_window(
        service: Service, platform: str) -> None:
    ask = PLATFORMS[platform]
    before = service.world.github.count("graphql")
    for text in ("what is waiting for review", "待 review 的 PR", "pending"):
        await ask(service, text)
    assert service.world.github.count("graphql") - before == 1
