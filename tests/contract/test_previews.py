"""Previews are what the platforms receive: `prdigest digest --format slack|telegram|feishu`
prints the same requests the adapters then send to the fake servers, and `post` builds an
outbound adapter from the secrets a post uses and nothing more."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.compose import outbound_adapter
from bot.config import Config
from bot.digests import Digests
from bot.errors import ConfigError
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit import EXAMPLES
from testkit.cli import preview_of
from testkit.fakes.slack import BOT_TOKEN, FakeSlack
from testkit.fakes.telegram import FakeTelegram

SNAPSHOT = str(EXAMPLES / "snapshot.json")
CONFIG = str(EXAMPLES / "prdigest.toml")
SECRETS = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "TELEGRAM_BOT_TOKEN",
           "TELEGRAM_WEBHOOK_SECRET", "FEISHU_APP_ID", "FEISHU_APP_SECRET",
           "FEISHU_VERIFICATION_TOKEN", "FEISHU_ENCRYPT_KEY")


@pytest.fixture
def no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SECRETS:
        monkeypatch.delenv(name, raising=False)


PLATFORM_URLS = {"slack": "api_url", "telegram": "api_url", "feishu": "domain"}
CHANNELS = {"slack": "slack:C0123456", "telegram": "telegram:-1001234567890",
            "feishu": "feishu:oc_0123456789abcdef"}


def _config_pointing_at(tmp_path: Path, urls: dict[str, str]) -> str:
    """The example config with each platform's API at its fake."""
    text = (EXAMPLES / "prdigest.toml").read_text("utf-8")
    for platform, url in urls.items():
        header = f"[platforms.{platform}]\n"
        text = text.replace(header, f'{header}{PLATFORM_URLS[platform]} = "{url}"\n')
    path = tmp_path / "prdigest.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _post(config: str, channel: str, *extra: str) -> Any:
    return CliRunner().invoke(app, ["post", "acme/lumen", "--week", "2026-W29", "--channel",
                                    channel, "--snapshot", SNAPSHOT, "--config", config,
                                    *extra])


def _dry_run(config: str, platform: str) -> list[dict[str, Any]]:
    result = _post(config, CHANNELS[platform], "--dry-run")
    assert result.exit_code == 0, result.stderr
    parts: list[dict[str, Any]] = json.loads(result.stdout)
    return parts


def _posted(config: str, platform: str) -> None:
    result = _post(config, CHANNELS[platform])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("posted 2026-W29 of acme/lumen")


def test_the_slack_dry_run_is_byte_for_byte_what_slack_receives(
    fake_slack: FakeSlack, tmp_path: Path, no_secrets: None, redis_url: str,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the bot token: an outbound post needs no signing secret and no app token.
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("REDIS_URL", redis_url)
    config = _config_pointing_at(tmp_path, {"slack": fake_slack.base_url})
    preview = _dry_run(config, "slack")
    # `digest --format slack` with the channel's topics previews the same delivery.
    assert preview_of("digest", "acme/lumen", "--week", "2026-W29", "--format", "slack",
                      "--topics", "npu,rollout", config=config) == preview
    _posted(config, "slack")
    bodies = [call.body for call in fake_slack.calls("chat.postMessage")]
    # slack_sdk sends the arguments as JSON, written as json.dumps writes it.
    assert [json.dumps(part["payload"]).encode() for part in preview] == bodies
    assert all(part["payload"]["metadata"]["event_payload"]["delivery"].startswith("pd-")
               for part in preview)
    # The Block Kit Builder link opens exactly the blocks sent.
    link = preview[0]["viewer"]
    assert link.startswith("https://app.slack.com/block-kit-builder#")
    opened = json.loads(urllib.parse.unquote(link.split("#", 1)[1]))
    assert opened == {"blocks": json.loads(bodies[0])["blocks"]}


def test_the_feishu_dry_run_is_byte_for_byte_what_feishu_receives(
    tmp_path: Path, no_secrets: None, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from testkit.fakes.feishu import FakeFeishu

    with FakeFeishu(app_id="cli_preview0000001", app_secret="preview-secret") as fake:
        monkeypatch.setenv("FEISHU_APP_ID", fake.app_id)
        monkeypatch.setenv("FEISHU_APP_SECRET", fake.app_secret)
        monkeypatch.setenv("REDIS_URL", redis_url)
        config = _config_pointing_at(tmp_path, {"feishu": fake.base_url})
        preview = _dry_run(config, "feishu")
        _posted(config, "feishu")
        sent = fake.sent_cards()
    assert [(c.endpoint, c.receive_id_type) for c in sent] == [("create", "chat_id")] * len(
        preview)
    # lark-oapi writes the body as JSON with the text unescaped.
    assert [json.dumps(part["payload"], ensure_ascii=False).encode() for part in preview] == [
        c.request.body for c in sent]
    # Each card's uuid comes from the delivery key: one per card, none shared.
    uuids = [part["payload"]["uuid"] for part in preview]
    assert len(set(uuids)) == len(uuids)


def test_the_telegram_dry_run_is_what_telegram_receives_field_for_field(
    tmp_path: Path, no_secrets: None, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeTelegram() as fake:
        monkeypatch.setenv("TELEGRAM_BOT_TOKEN", fake.token)
        monkeypatch.setenv("REDIS_URL", redis_url)
        config = _config_pointing_at(tmp_path, {"telegram": fake.base_url})
        preview = _dry_run(config, "telegram")
        _posted(config, "telegram")
        bodies = [r.body for r in fake.calls("sendMessage") if r.accepted]
    assert all(part["method"] == "sendMessage" for part in preview)
    # python-telegram-bot orders the fields itself: each field's bytes are compared.
    assert [_canonical(part["payload"]) for part in preview] == [
        _canonical(json.loads(body)) for body in bodies]


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":")).encode()


def test_a_preview_is_addressed_to_the_channel_that_gets_that_digest(
    tmp_path: Path, no_secrets: None
) -> None:
    text = (EXAMPLES / "prdigest.toml").read_text("utf-8") + """
[[channels]]
platform = "slack"
id = "C0COMPACT"
repo = "acme/lumen"
lang = "en"
style = "compact"
"""
    config = tmp_path / "prdigest.toml"
    config.write_text(text, encoding="utf-8")
    week = ("digest", "acme/lumen", "--week", "2026-W29", "--format", "slack")
    compact = preview_of(*week, "--lang", "en", "--style", "compact", config=str(config))
    full = preview_of(*week, "--lang", "zh", config=str(config))
    nobody = preview_of(*week, "--lang", "en", config=str(config))
    assert {part["payload"]["channel"] for part in compact} == {"C0COMPACT"}
    assert {part["payload"]["channel"] for part in full} == {"C0123456"}
    assert {part["payload"]["channel"] for part in nobody} == {"CHANNEL_ID"}
    keys = [parts[0]["payload"]["metadata"]["event_payload"]["delivery"]
            for parts in (compact, full, nobody)]
    assert len(set(keys)) == 3


def test_post_names_only_the_secret_a_post_needs(no_secrets: None, config: Config) -> None:
    source = SnapshotSource(read_snapshot(EXAMPLES / "snapshot.json"))
    for platform, needed in (("slack", "SLACK_BOT_TOKEN"), ("telegram", "TELEGRAM_BOT_TOKEN"),
                             ("feishu", "FEISHU_APP_ID, FEISHU_APP_SECRET")):
        with pytest.raises(ConfigError) as raised:
            outbound_adapter(Digests(config, source), platform)
        assert str(raised.value).endswith(f"set {needed}")


def test_post_builds_each_platform_from_its_post_secrets_alone(
        no_secrets: None, config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    source = SnapshotSource(read_snapshot(EXAMPLES / "snapshot.json"))
    for name in ("SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "FEISHU_APP_ID", "FEISHU_APP_SECRET"):
        monkeypatch.setenv(name, "x123")
    for platform in ("slack", "telegram", "feishu"):
        adapter = outbound_adapter(Digests(config, source), platform)
        assert adapter.routes() == []  # it posts; it receives nothing
        asyncio.run(adapter.close())


def test_a_dry_run_needs_no_redis_and_no_secret(no_secrets: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    result = CliRunner().invoke(app, ["post", "acme/lumen", "--week", "2026-W29", "--channel",
                                      "feishu:oc_0123456789abcdef", "--snapshot", SNAPSHOT,
                                      "--config", CONFIG, "--dry-run"])
    assert result.exit_code == 0, result.stderr
    parts = json.loads(result.stdout)
    assert parts and all(p["payload"]["receive_id"] == "oc_0123456789abcdef" for p in parts)
    card = json.loads(parts[0]["payload"]["content"])
    assert "2026" in card["header"]["title"]["content"]
    # The schedule's digest: the channel's topic first, and its report link.
    assert "/reports/acme/lumen/2026-W29?lang=zh" in parts[-1]["payload"]["content"]
    assert "nothing was sent" in result.stderr
