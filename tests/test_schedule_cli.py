"""`prdigest post`: on demand through the same ledger as the schedule, to a fake Slack."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.clock import HeldClock
from bot.config import load_config
from bot.delivery.schedule import Scheduler
from bot.digests import Digests
from bot.snapshot import read_snapshot
from bot.store.ledger import Ledger, Slot
from bot.store.redis.coordination import RedisCoordination
from testkit import EXAMPLES
from testkit.fakes.slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from testkit.schedule import CountingSource, FakePlatforms, FakePoster, at

SNAPSHOT = str(EXAMPLES / "snapshot.json")
CHANNEL = "slack:C0123456"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def config_file(tmp_path: Path, slack: FakeSlack) -> str:
    path = tmp_path / "prdigest.toml"
    path.write_text(f'''
[repos."acme/lumen"]
timezone = "Asia/Shanghai"

[[channels]]
platform = "slack"
id = "C0123456"
repo = "acme/lumen"
lang = "en"
schedule = "0 9 * * MON"
timezone = "Asia/Shanghai"

[platforms.slack]
api_url = "{slack.base_url}"
''', encoding="utf-8")
    return str(path)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, redis_url: str) -> str:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    monkeypatch.setenv("REDIS_URL", redis_url)
    return redis_url


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def post(config_file: str, *extra: str, week: str = "2026-W29") -> tuple[int, str, str]:
    return run("post", "acme/lumen", "--week", week, "--channel", CHANNEL, "--snapshot",
               SNAPSHOT, "--config", config_file, *extra)


def entry_of(redis_url: str, week: str = "2026-W29") -> object:
    async def read() -> object:
        port = RedisCoordination.from_url(redis_url)
        try:
            return await Ledger(port).get(Slot(week, CHANNEL, "acme/lumen"))
        finally:
            await port.close()

    return asyncio.run(read())


def test_post_sends_once_and_force_sends_again(
    slack: FakeSlack, config_file: str, env: str
) -> None:
    code, out, err = post(config_file)
    assert code == 0, err
    assert out.startswith("posted 2026-W29 of acme/lumen to slack:C0123456")
    first = slack.posted()
    assert first and {m["channel"] for m in first} == {"C0123456"}
    assert first[0]["text"].startswith("acme/lumen weekly report, 2026 week 29")

    code, out, err = post(config_file)
    assert code == 0, err
    assert "was already posted" in out and "--force" in out
    assert len(slack.posted()) == len(first)

    code, out, err = post(config_file, "--force")
    assert code == 0, err
    assert out.startswith("posted")
    assert len(slack.posted()) == 2 * len(first)
    entry = entry_of(env)
    assert getattr(entry, "forced", False) and getattr(entry, "generation", 0) == 1


async def test_the_schedule_skips_a_week_posted_on_demand(
    slack: FakeSlack, config_file: str, env: str
) -> None:
    code, _, err = await asyncio.to_thread(post, config_file)
    assert code == 0, err
    config = load_config(Path(config_file))
    clock = HeldClock(at("2026-07-20T01:00"))  # the channel's Monday 09:00
    platforms = FakePlatforms(clock)
    port = RedisCoordination.from_url(env)  # the ledger `prdigest post` wrote
    try:
        scheduler = Scheduler(Digests(config, CountingSource(read_snapshot(Path(SNAPSHOT)))),
                              port, FakePoster(platforms, "r1"), clock=clock)
        [result] = await scheduler.tick()
    finally:
        await port.close()
    assert result.status == "already-posted"
    assert platforms.delivered == []


def test_a_refused_post_exits_2_and_is_retried_by_the_next_post(
    slack: FakeSlack, config_file: str, env: str
) -> None:
    slack.fail_next("chat.postMessage", body={"ok": False, "error": "channel_not_found"})
    code, out, err = post(config_file)
    assert code == 2 and out == ""
    assert err.startswith("prdigest: error: posting 2026-W29") and "channel_not_found" in err
    code, out, err = post(config_file)
    assert code == 0 and out.startswith("posted"), err


@pytest.mark.parametrize("args, message", [
    (("--channel", "slack:CNOPE"), "channel slack:CNOPE is not in the config"),
    (("--channel", "CNOPE"), "expected platform:id"),
    (("--week", "2999-W01"), "has not started yet"),
    (("--week", "2026-W60"), "2026 has weeks 1 to 53"),
])
def test_bad_options_exit_2_with_one_line(
    config_file: str, env: str, args: tuple[str, str], message: str
) -> None:
    base = {"--week": "2026-W29", "--channel": CHANNEL}
    base[args[0]] = args[1]
    code, out, err = run("post", "acme/lumen", "--week", base["--week"], "--channel",
                         base["--channel"], "--snapshot", SNAPSHOT, "--config", config_file)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_another_repository_is_refused(config_file: str, env: str) -> None:
    code, _, err = run("post", "acme/other", "--week", "2026-W29", "--channel", CHANNEL,
                       "--config", config_file)
    assert code == 2 and "follows acme/lumen, not acme/other" in err


def test_without_redis_or_credentials_it_says_what_to_set(
    config_file: str, env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLACK_BOT_TOKEN")
    code, _, err = post(config_file)
    assert code == 2 and "slack is not configured" in err and "SLACK_BOT_TOKEN" in err
    assert BOT_TOKEN not in err and SIGNING_SECRET not in err
    monkeypatch.delenv("REDIS_URL")
    code, _, err = post(config_file)
    assert code == 2 and "set REDIS_URL" in err
