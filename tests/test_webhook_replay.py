"""A merge GitHub delivers again - the same delivery redelivered, or replayed under a
new `X-GitHub-Delivery` - is announced once and costs GitHub no second request: the
claim on (repository, PR, merge commit) is checked before anything is fetched."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from bot.web.app import create_app
from testkit.fakes.github import FakeGitHub
from testkit.server_support import (
    REPO,
    WEBHOOK_SECRET,
    clear_env,
    clock,
    example_config,
    example_snapshot,
    merged_event,
    recording_adapters,
    serving,
    snapshot_pull,
    webhook_request,
)

TOKEN = "ghp_replay_token"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        fake.add_repo(REPO, example_snapshot().pulls)
        yield fake


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, github: FakeGitHub, redis_url: str) -> Any:
    clear_env(monkeypatch)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", WEBHOOK_SECRET)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    config = example_config()
    config = msgspec.structs.replace(
        config, github=msgspec.structs.replace(config.github, api_url=github.base_url))
    # No source given: the live GitHub source (behind the Redis cache) reads the fake.
    return create_app(config, redis_url=redis_url, clock=clock(), background=False,
                      adapters=recording_adapters())


def merge_of(number: int, sha: str) -> dict[str, Any]:
    event = merged_event(snapshot_pull(number))
    event["pull_request"]["merge_commit_sha"] = sha
    return event


async def test_a_replay_under_a_new_delivery_id_costs_no_github_request(
        app: Any, github: FakeGitHub) -> None:
    event = merge_of(1212, "9f1c0ffee" * 4)
    async with serving(app) as http:
        body, headers = webhook_request(event, delivery="d-first")
        first = await http.post("/github/webhook", content=body, headers=headers)
        spent = github.count()
        answers = []
        for delivery in ("d-first", "d-replay-1", "d-replay-2"):
            body, headers = webhook_request(event, delivery=delivery)
            answers.append(await http.post("/github/webhook", content=body, headers=headers))
    assert first.status_code == 200 and first.json()["notified"]
    assert spent >= 1  # the first delivery read the PR from GitHub
    assert [a.json() for a in answers] == [{"duplicate": True}] * 3
    assert github.count() == spent


async def test_another_merge_is_still_announced(app: Any, github: FakeGitHub) -> None:
    async with serving(app) as http:
        body, headers = webhook_request(merge_of(1212, "a" * 40), delivery="d-1")
        first = await http.post("/github/webhook", content=body, headers=headers)
        body, headers = webhook_request(merge_of(1201, "b" * 40), delivery="d-2")
        second = await http.post("/github/webhook", content=body, headers=headers)
    assert first.json()["notified"]
    assert "duplicate" not in second.json()
