"""`compose(config, role)`: each role gets the parts it runs and nothing more, all on the
one clock, `Events` and `Digests` of the process; what a process opened, it closes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from adapters.console import ConsoleAdapter
from bot.compose import ROLES, compose
from bot.config import Config, load_config, parse_config
from bot.errors import ConfigError, UserError
from bot.events import DigestBuilt, Event, Events, GitHubAnswered
from bot.models import Command
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit.clock import VirtualClock
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REPO = "acme/lumen"
WEEK = "2026-W29"


def example() -> tuple[Config, SnapshotSource]:
    return (load_config(EXAMPLES / "prdigest.toml"),
            SnapshotSource(read_snapshot(EXAMPLES / "snapshot.json")))


def parts(process: Any) -> set[str]:
    """The optional parts a process has."""
    names = ("narrator", "cache", "github", "handler", "notifier", "scheduler", "poller",
             "flusher")
    return {name for name in names if getattr(process, name) is not None} | (
        {"adapters"} if process.adapters else set())


async def test_each_role_has_only_the_parts_it_runs() -> None:
    config, source = example()
    found = {}
    for role in ("digest", "ask", "chat", "serve"):
        process = compose(config, role, source=source, llm=False, adapters={})
        found[role] = parts(process)
        await process.close()
    assert found == {"digest": set(), "ask": {"handler"}, "chat": {"handler"},
                     # Without Redis: no schedule and no notice batches, notices in memory.
                     "serve": {"handler", "notifier"}}


async def test_the_process_shares_one_clock_events_and_digests() -> None:
    config, source = example()
    clock = VirtualClock(datetime(2026, 7, 22, tzinfo=UTC))
    events = Events()
    heard: list[Event] = []
    events.subscribe(heard.append)
    process = compose(config, "serve", source=source, clock=clock, events=events,
                      llm=False, adapters={})
    try:
        assert process.handler is not None and process.notifier is not None
        assert process.digests.clock is clock and process.handler.clock is clock
        assert process.handler.digests is process.digests
        assert process.notifier.digests is process.digests
        channel = next(c for c in config.channels if c.follows(REPO))
        reply = await process.handler.handle(
            Command(kind="digest", lang="en", repo=REPO, week=WEEK), channel=channel)
        assert reply.kind == "digest"
    finally:
        await process.close()
    # The digest the handler asked for was told on the process's events.
    assert DigestBuilt("command") in heard


async def test_a_chat_process_answers_at_the_console() -> None:
    config, source = example()
    async with compose(config, "chat", source=source, llm=False) as process:
        assert process.handler is not None
        channel = next(c for c in config.channels if c.follows(REPO))
        console = ConsoleAdapter(process.handler, channel, fmt="text", lang="en")
        reply = await console.answer("risks for #1201")
    assert reply.kind != "error"


def test_a_post_process_needs_the_ledgers_redis() -> None:
    config, source = example()
    with pytest.raises(ConfigError, match=config.cache.url_env):
        compose(config, "post", source=source, platform="slack")


async def test_a_post_process_refuses_a_platform_that_only_prints(redis_url: str) -> None:
    config, source = example()
    with pytest.raises(UserError, match="print"):
        compose(config, "post", source=source, redis_url=redis_url, platform="console")


async def test_a_post_process_closes_only_the_adapter_it_built(redis_url: str) -> None:
    config, source = example()
    closed: list[str] = []

    class Given:
        """An adapter a test hands in: the test closes it, not the process."""

        async def close(self) -> None:
            closed.append("given")

    process = compose(config, "post", source=source, redis_url=redis_url,
                      adapters={"slack": Given()},  # type: ignore[dict-item]
                      llm=False)
    assert process.scheduler is not None and not process.owns_adapters
    assert process.scheduler.replica.startswith("cli-")
    await process.close()
    assert closed == []


def test_an_unknown_role_is_refused() -> None:
    config, source = example()
    with pytest.raises(ValueError, match="unknown role"):
        compose(config, "worker", source=source)  # type: ignore[arg-type]
    assert set(ROLES) == {"serve", "post", "digest", "ask", "chat"}


def test_only_a_serve_process_reads_github_by_itself() -> None:
    config, _ = example()
    with pytest.raises(ValueError, match="source of PR data"):
        compose(config, "digest")


async def test_a_serve_process_tells_githubs_answers_as_events(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_compose")
    heard: list[Event] = []
    events = Events()
    events.subscribe(heard.append)
    with FakeGitHub(token="ghp_compose") as github:
        github.add_repo("acme/widgets", build_week("acme/widgets", count=3))
        config = parse_config({"repos": {"acme/widgets": {"timezone": "UTC"}},
                               "github": {"api_url": github.base_url}})
        process = compose(config, "serve", events=events, llm=False, adapters={},
                          clock=VirtualClock(datetime.now(UTC)))
        try:
            await process.digests.build("acme/widgets", WEEK, "en")
        finally:
            await process.close()
    answers = [event for event in heard if isinstance(event, GitHubAnswered)]
    assert answers and {event.status for event in answers} == {200}
