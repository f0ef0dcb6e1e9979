"""The server as an operator and a platform see it: `/healthz`, `/metrics`, the chat
routes mounted from the adapters, the lifespan, and `prdigest serve` itself."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from adapters.registry import PLATFORMS
from bot.chat.handler import CommandHandler
from bot.chat.inbound import Asker
from bot.cli import app as cli_app
from bot.digests import Digests
from bot.engine import week_pulls
from bot.events import Events
from bot.models import Command, PullRequest, Snapshot
from bot.source import SnapshotSource
from bot.web.app import create_app
from bot.web.metrics import Metrics
from testkit.fakes.telegram import FakeTelegram, group_chat, message_update
from testkit.redis_server import free_port
from testkit.reliability.serve_process import START_SECONDS
from testkit.server_support import (
    CONFIG_PATH,
    REPO,
    RecordingAdapter,
    clear_env,
    clock,
    example_config,
    example_snapshot,
    recording_adapters,
    services_of,
    serving,
)

TELEGRAM_SECRET = "tg-secret_123"


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus' text format (0 when absent)."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and line.split(" ")[0] != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


# --- /healthz and /metrics --------------------------------------------------------------


async def test_the_example_config_starts_without_any_credentials() -> None:
    """No platform secrets, no Redis, no GitHub token: the service still starts, and
    /healthz names what each platform lacks (variable names, never values)."""
    app = create_app(example_config(), background=False)
    async with serving(app) as http:
        health = await http.get("/healthz")
        metrics = await http.get("/metrics")
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "ok"
    assert body["redis"] == {"configured": False, "ok": False,
                             "note": "set REDIS_URL for the cache, subscriptions and the "
                                     "weekly schedule"}
    platforms = body["platforms"]
    assert set(platforms) == {spec.name for spec in PLATFORMS}
    assert all(p["configured"] is False for p in platforms.values())
    assert platforms["slack"]["missing_env"] == ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"]
    assert platforms["telegram"]["missing_env"] == ["TELEGRAM_BOT_TOKEN",
                                                     "TELEGRAM_WEBHOOK_SECRET"]
    assert "FEISHU_APP_ID" in platforms["feishu"]["missing_env"]
    assert body["github"]["source"] == "github" and body["github"]["token"] is False
    assert body["github"]["ok"] is True  # nothing asked of GitHub yet
    assert body["scheduler"]["enabled"] is False
    assert body["merge_notices"]["mode"] == "poller"
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain")
    for family in ("prdigest_commands_total", "prdigest_digests_built_total",
                   "prdigest_digests_posted_total", "prdigest_github_requests_total",
                   "prdigest_cache_lookups_total"):
        assert f"# TYPE {family} counter" in metrics.text
    assert metric(metrics.text, "prdigest_digests_built_total", trigger="schedule") == 0


async def test_healthz_reports_redis_and_fails_when_it_is_down(redis_url: str) -> None:
    config = example_config()
    app = create_app(config, redis_url=redis_url, source=SnapshotSource(example_snapshot()),
                     background=False)
    async with serving(app) as http:
        body = (await http.get("/healthz")).json()
    # The suite's Redis keeps nothing across a restart: /healthz names that, still ok.
    assert body["redis"] == {"configured": True, "ok": True, "hazards": [
        "persistence is off (no append-only file, no snapshots): a restart forgets the "
        "ledger, the subscriptions and the notice claims; set appendonly yes"]}
    assert body["scheduler"]["enabled"] is True
    # Nothing listens on this port: Redis is configured but unreachable.
    dead = f"redis://127.0.0.1:{free_port()}/0"
    app = create_app(config, redis_url=dead, source=SnapshotSource(example_snapshot()),
                     background=False)
    async with serving(app) as http:
        answer = await http.get("/healthz")
    assert answer.status_code == 503
    assert answer.json()["status"] == "unavailable"
    assert answer.json()["redis"]["ok"] is False
    assert dead not in answer.text


async def test_metrics_count_commands_by_platform_and_outcome() -> None:
    config = example_config()
    metrics = Metrics()
    events = Events()
    events.subscribe(metrics.on)
    source = SnapshotSource(example_snapshot())
    digests = Digests(config, source, clock=clock(), events=events)
    slack = CommandHandler(digests, events=events)
    channel = config.channel("slack:C0123456")
    await slack.handle(Command(kind="help", lang="en", text="help"), channel=channel)
    await slack.handle(Command(kind="risks", lang="en", pull=99999, text="risks #99999"),
                       channel=channel, asker=Asker(chat="slack:C0123456", user="U1"))
    digest = await slack.handle(Command(kind="digest", lang="zh", week="last", text="digest"),
                                channel=channel)
    text = metrics.exposition().decode()
    assert metric(text, "prdigest_commands_total", platform="slack", command="help",
                  outcome="ok") == 1
    assert metric(text, "prdigest_commands_total", platform="slack", command="risks",
                  outcome="pull-not-found") == 1
    assert metric(text, "prdigest_digests_built_total", trigger="command") == 1
    # Every chat digest links to its report page.
    assert digest.digest is not None
    assert digest.digest.report_url == "http://localhost:8080/reports/acme/lumen/2026-W29?lang=zh"


async def test_a_scrape_counts_cache_hits_and_misses(redis_url: str) -> None:
    import redis

    from bot.store.cache import CachedSource
    from bot.store.redis.cache import Cache

    metrics = Metrics()
    events = Events()
    events.subscribe(metrics.on)
    config = example_config()
    cache = Cache(redis.Redis.from_url(redis_url), events=events)
    source = CachedSource(SnapshotWeeks(example_snapshot()), cache, config)
    source.fetch_week(REPO, "2026-W29")  # cold: a miss
    source.fetch_week(REPO, "2026-W29")  # warm: a hit, and its PRs
    text = metrics.exposition().decode()
    assert metric(text, "prdigest_cache_lookups_total", kind="week", result="miss") == 1
    assert metric(text, "prdigest_cache_lookups_total", kind="week", result="hit") == 1
    in_week = week_pulls(example_snapshot(), "2026-W29", config.repo(REPO).timezone)
    assert metric(text, "prdigest_cache_lookups_total", kind="pull", result="hit") == len(
        in_week)
    cache.close()


async def test_a_scrape_counts_prs_held_in_memory(redis_url: str) -> None:
    import redis

    from bot.store.cache import CachedSource
    from bot.store.redis.cache import Cache

    metrics = Metrics()
    events = Events()
    events.subscribe(metrics.on)
    cache = Cache(redis.Redis.from_url(redis_url), events=events)
    source = CachedSource(SnapshotWeeks(example_snapshot()), cache, example_config(),
                          events=events)
    number = example_snapshot().pulls[0].number
    assert source.held_pull(REPO, number) is None
    source.fetch_pull(REPO, number)
    assert source.held_pull(REPO, number) is not None
    text = metrics.exposition().decode()
    assert metric(text, "prdigest_cache_lookups_total", kind="held-pull", result="miss") == 1
    assert metric(text, "prdigest_cache_lookups_total", kind="held-pull", result="hit") == 1
    # the held copy was found without reading Redis: only the first fetch did
    assert metric(text, "prdigest_cache_lookups_total", kind="pointer", result="miss") == 1
    assert metric(text, "prdigest_cache_lookups_total", kind="pointer", result="hit") == 0
    cache.close()


class SnapshotWeeks:
    """A snapshot as the cache's source (`bot.store.cache.WeekSource`): weeks as snapshots."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def fetch_week(self, repo: str, week: str) -> Snapshot:
        return self.snapshot

    def fetch_pull(self, repo: str, number: int) -> PullRequest | None:
        return next((p for p in self.snapshot.pulls if p.number == number), None)


# --- chat routes through the one app ------------------------------------------------------


async def _last_message(tg: FakeTelegram, timeout: float = 15.0) -> dict[str, str]:
    """The message that ends a digest: the one carrying the link buttons."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in tg.sent():
            if "reply_markup" in message:
                return message
        await asyncio.sleep(0.05)
    raise AssertionError(f"no digest end among {len(tg.sent())} message(s)")


async def test_telegram_route_is_mounted_answers_and_is_counted(
    monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    """A real Telegram adapter on its fake, mounted by the server: the update is
    answered in the channel, the command is counted under `telegram`, and a digest
    carries its report link."""
    with FakeTelegram() as tg:
        monkeypatch.setenv("TELEGRAM_BOT_TOKEN", tg.token)
        monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TELEGRAM_SECRET)
        app = create_app(example_config(), redis_url=redis_url,
                         source=SnapshotSource(example_snapshot()), clock=clock(), background=False,
                         adapter_overrides={"telegram": {"api_url": tg.base_url}})
        async with serving(app) as http:
            health = (await http.get("/healthz")).json()
            refused = await http.post("/telegram/webhook", json=message_update(1, "help"),
                                      headers={"X-Telegram-Bot-Api-Secret-Token": "wrong"})
            update = message_update(2, "/digest last week", chat=group_chat())
            accepted = await http.post("/telegram/webhook", json=update,
                                       headers={"X-Telegram-Bot-Api-Secret-Token":
                                                TELEGRAM_SECRET})
            last = await _last_message(tg)
            scraped = (await http.get("/metrics")).text
    assert health["platforms"]["telegram"]["configured"] is True
    assert health["platforms"]["telegram"]["route"] == "/telegram/webhook"
    assert refused.status_code == 401
    assert accepted.status_code == 200
    sent = tg.sent()
    assert {message["chat_id"] for message in sent} == {"-1001234567890"}
    assert "acme/lumen" in sent[0]["text"]
    buttons = json.loads(last["reply_markup"])["inline_keyboard"]
    urls = [button["url"] for row in buttons for button in row if "url" in button]
    assert "http://localhost:8080/reports/acme/lumen/2026-W29?lang=en" in urls
    assert metric(scraped, "prdigest_commands_total", platform="telegram", command="digest",
                  outcome="ok") == 1


async def test_lifespan_starts_and_closes_every_adapter() -> None:
    adapters = recording_adapters()
    broken = RecordingAdapter("feishu")

    async def refuse() -> None:
        raise ConnectionError("feishu is unreachable")

    broken.start = refuse  # type: ignore[method-assign]
    adapters["feishu"] = broken
    app = create_app(example_config(), source=SnapshotSource(example_snapshot()),
                     adapters=adapters, background=False)
    async with serving(app) as http:
        health = (await http.get("/healthz")).json()
    assert adapters["slack"].started == 1 and adapters["slack"].closed == 1
    assert broken.closed == 1
    assert health["platforms"]["feishu"]["start_error"] == (
        "ConnectionError: feishu is unreachable")
    assert health["status"] == "ok"


async def test_a_server_process_freezes_its_startup_heap() -> None:
    """`prdigest serve` takes what startup left alive out of the collector's full
    passes (about 0.3 s each with the SDKs loaded); apps in tests leave the heap be."""
    gc.unfreeze()
    app = create_app(example_config(), source=SnapshotSource(example_snapshot()),
                     adapters=recording_adapters(), background=False)
    async with serving(app):
        assert gc.get_freeze_count() == 0
    app = create_app(example_config(), source=SnapshotSource(example_snapshot()),
                     adapters=recording_adapters(), background=False, freeze_heap=True)
    try:
        async with serving(app):
            assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


async def test_background_work_starts_with_the_app_and_stops_with_it(redis_url: str) -> None:
    app = create_app(example_config(), redis_url=redis_url,
                     source=SnapshotSource(example_snapshot()), adapters=recording_adapters(),
                     clock=clock())
    services = services_of(app)
    async with serving(app) as http:
        body = (await http.get("/healthz")).json()
        assert body["scheduler"]["task"] == "running"
        tasks = dict(services.tasks)
    assert tasks and all(task.done() for task in tasks.values())


# --- prdigest serve -----------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli_app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (('schedule = "0 9 * * MON"', 'schedule = "every monday"', 1),
         "channels[0].schedule: not a cron expression"),
        (("poll_minutes = 5", "poll_minutes = 0", 1), "github.poll_minutes"),
        (("catch_up_hours = 12", "catch_up_hours = inf", 1), "server.catch_up_hours"),
        (("catch_up_hours = 12", "catch_up_hours = nan", 1), "server.catch_up_hours"),
        (('schedule = "0 9 * * MON"', 'schedule = "0 9 30 2 *"', 1),
         "channels[0].schedule: '0 9 30 2 *' does not fire in every year"),
        (("[server]", "[server]\nport = 8080", 1), "server"),
    ],
)
def test_serve_names_the_bad_config_field_and_exits_2(
    tmp_path: Path, change: tuple[str, str, int], field: str
) -> None:
    text = CONFIG_PATH.read_text().replace(*change)
    path = tmp_path / "prdigest.toml"
    path.write_text(text)
    code, out, err = invoke("serve", "--config", str(path), "--port", "1")
    assert code == 2
    assert field in err
    assert err.startswith("prdigest: error: ") and "Traceback" not in err + out


def test_serve_runs_the_app_with_its_startup_heap_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import uvicorn

    import bot.web.app

    built: list[dict[str, Any]] = []
    ran: list[object] = []
    monkeypatch.setattr(bot.web.app, "create_app",
                        lambda config, **options: built.append(options) or "app")
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: ran.append(app))
    code, _, err = invoke("serve", "--config", str(CONFIG_PATH), "--port", "8099")
    assert (code, err) == (0, "")
    assert ran == ["app"] and built[0]["freeze_heap"] is True


def test_serve_without_a_config_file_exits_2(tmp_path: Path) -> None:
    code, _, err = invoke("serve", "--config", str(tmp_path / "missing.toml"))
    assert code == 2
    assert "missing.toml: cannot read" in err


def _wait_until_up(url: str, process: subprocess.Popen[bytes],
                   timeout: float = START_SECONDS) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise AssertionError(f"prdigest serve exited with {process.returncode}")
        try:
            return httpx.get(url, timeout=2)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_prdigest_serve_answers_healthz_and_metrics_on_a_free_port(
    tmp_path: Path, redis_url: str
) -> None:
    """The real command under uvicorn with the example config and no platform
    credentials; GitHub points at a closed local port, so nothing leaves the machine."""
    closed = free_port()
    config = tmp_path / "prdigest.toml"
    config.write_text(CONFIG_PATH.read_text().replace(
        "[github]\n", f'[github]\napi_url = "http://127.0.0.1:{closed}"\n'))
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "TELEGRAM_", "FEISHU_", "GITHUB_"))}
    env["REDIS_URL"] = redis_url
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "serve", "--config", str(config),
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        health = _wait_until_up(f"http://127.0.0.1:{port}/healthz", process)
        scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
        missing_page = httpx.get(f"http://127.0.0.1:{port}/reports/nobody/nothing", timeout=5)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            output, _ = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
    assert health.status_code == 200, health.text
    body: dict[str, Any] = health.json()
    assert body["redis"]["ok"] is True
    assert {name: p["configured"] for name, p in body["platforms"].items()} == {
        spec.name: False for spec in PLATFORMS}
    assert body["scheduler"]["task"] == "running"
    assert body["merge_notices"]["mode"] == "poller"
    assert scraped.status_code == 200
    assert "prdigest_commands_total" in scraped.text
    assert missing_page.status_code == 404
    assert process.returncode == 0
    assert b"Traceback" not in output


_LOADS_LARK = """
import sys
from pathlib import Path
from bot.digests import Digests
from bot.events import Events
from bot.config import load_config
from bot.web.app import create_app
app = create_app(load_config(Path("examples/prdigest.toml")), background=False)
feishu = app.state.services.process.adapters.get("feishu")
print("lark" if "lark_oapi" in sys.modules else "no-lark", type(feishu).__name__)
"""


@pytest.mark.parametrize(("feishu_env", "expected"), [
    ({}, "no-lark NoneType"),
    ({"FEISHU_APP_ID": "cli_x", "FEISHU_APP_SECRET": "s", "FEISHU_VERIFICATION_TOKEN": "v"},
     "lark FeishuAdapter"),
])
@pytest.mark.slow  # many CPU seconds: in `make test-all`, not the quick loop
def test_lark_is_loaded_only_for_a_bot_with_feishu_credentials(
    feishu_env: dict[str, str], expected: str
) -> None:
    """lark-oapi's import costs seconds and ~130 MiB: a Slack or Telegram bot skips it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FEISHU_", "SLACK_",
                                                                     "TELEGRAM_"))}
    env.update(feishu_env, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    done = subprocess.run([sys.executable, "-c", _LOADS_LARK], env=env, capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == expected.split()
