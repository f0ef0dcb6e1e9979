"""The server's one clock is GitHub's, the narrator's and the chat adapters' too: a
service built on a virtual clock waits out GitHub's failures, the model's and a
platform's on it (at once, recorded), never on the wall clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.config import parse_config
from bot.github.source import GitHubSource
from bot.models import Reply
from bot.narrate.client import BACKOFF_S, RETRIES
from bot.web.services import build_services
from testkit.clock import VirtualClock
from testkit.fakes.feishu import MESSAGES_PATH, FakeFeishu
from testkit.fakes.github import FakeGitHub
from testkit.fakes.github_fixtures import build_week
from testkit.fakes.openai import FakeOpenAI
from testkit.server_support import clear_env

REPO = "acme/widgets"
WEEK = "2026-W29"
TOKEN = "ghp_service_clock"


async def test_githubs_and_the_models_waits_are_on_the_services_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with FakeGitHub(token=TOKEN) as github, FakeOpenAI() as model:
        github.add_repo(REPO, build_week(REPO, count=5))
        config = parse_config({"repos": {REPO: {"timezone": "Asia/Shanghai"}},
                               "github": {"api_url": github.base_url},
                               "llm": {"base_url": model.base_url, "model": "fake-model"}})
        # At the real time: the fake GitHub's reset times are real epoch seconds.
        clock = VirtualClock(datetime.now(UTC))
        services = build_services(config, clock=clock, background=False, adapters={})
        try:
            assert isinstance(services.process.github, GitHubSource)
            github.fail_next(2, 502)
            model.mode = "500"
            digest = await services.process.digests.build(REPO, WEEK, "en")
        finally:
            if services.process.narrator is not None:
                await services.process.narrator.close()
            services.process.github.close()
    assert digest.narration is not None
    assert {f.reason for f in digest.narration.fallbacks} == {"server-error"}
    # GitHub's two 502s were waited out with its backoff; each model call that failed
    # with its own, after every attempt but the last.
    calls = model.calls // (RETRIES + 1)
    assert calls >= 1 and model.calls % (RETRIES + 1) == 0
    backoffs = [BACKOFF_S * 2.0**n for n in range(RETRIES)]
    assert sorted(clock.slept) == sorted([1.0, 2.0] + backoffs * calls)


async def test_the_adapters_the_service_builds_wait_on_its_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Feishu card refused with a 5xx is sent again after its back-off, passed on
    the service's clock."""
    clear_env(monkeypatch)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with FakeFeishu(app_id="cli_service_clock", app_secret="feishu-secret") as feishu:
        for name, value in (("FEISHU_APP_ID", feishu.app_id),
                            ("FEISHU_APP_SECRET", "feishu-secret"),
                            ("FEISHU_VERIFICATION_TOKEN", "v")):
            monkeypatch.setenv(name, value)
        config = parse_config({"repos": {REPO: {"timezone": "Asia/Shanghai"}},
                               "platforms": {"feishu": {"domain": feishu.base_url}}})
        clock = VirtualClock()
        services = build_services(config, clock=clock, background=False, llm=False)
        adapter = services.process.adapters["feishu"]
        feishu.fail_next(MESSAGES_PATH, status=503, body={"code": 1000, "msg": "busy"},
                         times=2)
        try:
            ids = await adapter.send_reply("oc_service_clock", Reply(kind="help", lang="en"),
                                           idempotency_key="notice-1")
        finally:
            await adapter.close()
            assert isinstance(services.process.github, GitHubSource)
            services.process.github.close()
    assert len(ids) == 1
    assert clock.slept == [0.5, 1.0]
