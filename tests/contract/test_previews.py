"""Previews are what the platforms receive: `prdigest digest --format slack|telegram|feishu`
prints the same requests the adapters then send to the fake servers, and `post` builds an
outbound adapter from the secrets a post uses and nothing more."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from adapters.slack.adapter import SlackAdapter
from adapters.telegram.adapter import TelegramAdapter
from bot.cli import app
from bot.config import Config, load_config
from bot.delivery.post import adapter_for
from bot.digests import Digests
from bot.errors import ConfigError
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from bot.store.claims import Claims
from testkit import EXAMPLES
from testkit.fakes.slack import BOT_TOKEN, FakeSlack
from testkit.fakes.telegram import FakeTelegram
from tests.contract.test_slack_http import RecordingHandler
from tests.test_cli_preview import preview_of

SNAPSHOT = str(EXAMPLES / "snapshot.json")
CONFIG = str(EXAMPLES / "prdigest.toml")
SECRETS = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "TELEGRAM_BOT_TOKEN",
           "TELEGRAM_WEBHOOK_SECRET", "FEISHU_APP_ID", "FEISHU_APP_SECRET",
           "FEISHU_VERIFICATION_TOKEN", "FEISHU_ENCRYPT_KEY")


@pytest.fixture
def no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SECRETS:
        monkeypatch.delenv(name, raising=False)


def _digest(lang: str = "zh") -> Any:
    settings = load_config(EXAMPLES / "prdigest.toml")
    source = SnapshotSource(read_snapshot(EXAMPLES / "snapshot.json"))
    return asyncio.run(Digests(settings, source).build("acme/lumen", "2026-W29", lang,
                                                       link=True))  # type: ignore[arg-type]


def _post_and_close(adapter: Any, channel_id: str, digest: Any) -> None:
    async def post() -> None:
        try:
            await adapter.post_digest(channel_id, digest)
        finally:
            await adapter.close()

    asyncio.run(post())


def test_the_slack_preview_is_what_slack_receives_from_a_bot_token_alone(
    fake_slack: FakeSlack, config: Config, no_secrets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the bot token: an outbound post needs no signing secret and no app token.
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    slack = msgspec.structs.replace(config.platforms.slack, api_url=fake_slack.base_url)
    config = msgspec.structs.replace(
        config, platforms=msgspec.structs.replace(config.platforms, slack=slack))
    source = SnapshotSource(read_snapshot(EXAMPLES / "snapshot.json"))
    adapter = adapter_for(Digests(config, source), "slack")
    assert isinstance(adapter, SlackAdapter) and adapter.routes() == []
    preview = preview_of("digest", "acme/lumen", "--week", "2026-W29", "--format", "slack")
    _post_and_close(adapter, "C0123456", _digest())
    posted = fake_slack.posted()
    assert [part["payload"] for part in preview] == posted
    # The Block Kit Builder link opens exactly the blocks sent.
    link = preview[0]["viewer"]
    assert link.startswith("https://app.slack.com/block-kit-builder#")
    opened = json.loads(urllib.parse.unquote(link.split("#", 1)[1]))
    assert opened == {"blocks": posted[0]["blocks"]}


def test_the_telegram_preview_is_what_telegram_receives(no_secrets: None) -> None:
    preview = preview_of("digest", "acme/lumen", "--week", "2026-W29", "--format", "telegram",
                         "--lang", "en")
    digest = _digest("en")
    with FakeTelegram() as fake:
        adapter = TelegramAdapter(load_example(), RecordingHandler(), Claims(None),
                                  token=fake.token, secret_token=None, api_url=fake.base_url,
                                  outbound_only=True)
        _post_and_close(adapter, "-1001234567890", digest)
        sent = fake.sent()
    assert len(sent) == len(preview) >= 1
    for part, fields in zip(preview, sent, strict=True):
        payload = part["payload"]
        assert part["method"] == "sendMessage"
        assert str(payload["chat_id"]) == fields["chat_id"]
        assert payload["text"] == fields["text"]
        assert payload["parse_mode"] == fields["parse_mode"]
        assert payload["link_preview_options"] == json.loads(fields["link_preview_options"])
        if "reply_markup" in payload:
            assert payload["reply_markup"] == json.loads(fields["reply_markup"])


def load_example() -> Config:
    return load_config(EXAMPLES / "prdigest.toml")


def test_the_feishu_preview_is_what_feishu_receives(no_secrets: None) -> None:
    from adapters.feishu.adapter import FeishuAdapter
    from testkit.fakes.feishu import FakeFeishu

    preview = preview_of("digest", "acme/lumen", "--week", "2026-W29", "--format", "feishu")
    digest = _digest()
    with FakeFeishu(app_id="cli_preview0000001", app_secret="preview-secret") as fake:
        adapter = FeishuAdapter(app_id=fake.app_id, app_secret=fake.app_secret,
                                config=load_example(), handler=RecordingHandler(),
                                deduper=Claims(None), domain=fake.base_url,
                                bot_open_id="ou_fake_bot", outbound_only=True)
        _post_and_close(adapter, "oc_0123456789abcdef", digest)
        sent = fake.sent_cards()
    assert [(c.endpoint, c.receive_id_type) for c in sent] == [("create", "chat_id")] * len(
        preview)
    assert [p["payload"] for p in preview] == [
        {"receive_id": c.target, "msg_type": "interactive", "content": c.content,
         "uuid": c.uuid} for c in sent]


def test_post_names_only_the_secret_a_post_needs(no_secrets: None, config: Config) -> None:
    source = SnapshotSource(read_snapshot(EXAMPLES / "snapshot.json"))
    for platform, needed in (("slack", "SLACK_BOT_TOKEN"), ("telegram", "TELEGRAM_BOT_TOKEN"),
                             ("feishu", "FEISHU_APP_ID, FEISHU_APP_SECRET")):
        with pytest.raises(ConfigError) as raised:
            adapter_for(Digests(config, source), platform)
        assert str(raised.value).endswith(f"set {needed}")


def test_post_builds_each_platform_from_its_post_secrets_alone(
        no_secrets: None, config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    source = SnapshotSource(read_snapshot(EXAMPLES / "snapshot.json"))
    for name in ("SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "FEISHU_APP_ID", "FEISHU_APP_SECRET"):
        monkeypatch.setenv(name, "x123")
    for platform in ("slack", "telegram", "feishu"):
        adapter = adapter_for(Digests(config, source), platform)
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
