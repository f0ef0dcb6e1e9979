"""`prdigest channels` lists the file's channels and the chats set up from chat;
`--remove` forgets a chat's own settings; `prdigest reload` checks the file before it
signals anything."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bot.store.chat_settings import ChatSettings
from bot.store.redis.chat_settings import RedisChatSettings
from bot.store.redis.client import sync_client
from testkit.cli import run_cli

CONFIG = """
[repos."acme/lumen"]
[[channels]]
platform = "slack"
id = "CFILE"
repo = "acme/lumen"
schedule = "0 9 * * MON"

[chat]
repos = ["acme/*"]
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "prdigest.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_both_kinds_of_channel_are_listed(config: Path, redis_url: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    client = sync_client(redis_url)
    store = RedisChatSettings(client)
    store.put("telegram:-1001", ChatSettings(repos=("acme/tools",), lang="en",
                                             schedule="30 17 * * FRI", timezone="UTC"))
    store.put("slack:CGONE", ChatSettings(repos=("strangers/x",)))
    result = run_cli("channels", "--config", str(config))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["CHANNEL", "FROM", "REPOSITORIES", "LANG", "SCHEDULE",
                                "TIMEZONE"]
    assert lines[1].split()[:3] == ["slack:CFILE", "file", "acme/lumen"]
    assert lines[2].split() == ["telegram:-1001", "chat", "acme/tools", "en", "30", "17",
                                "*", "*", "FRI", "UTC"]
    assert "slack:CGONE: set up from chat, but none of its repositories is allowed now" \
        in result.stdout

    removed = run_cli("channels", "--config", str(config), "--remove", "telegram:-1001")
    assert removed.exit_code == 0, removed.output
    assert sorted(store.all()) == ["slack:CGONE"]
    client.close()


def test_without_redis_only_the_files_channels_are_listed(
        config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    result = run_cli("channels", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert "slack:CFILE" in result.stdout and "only the file's channels" in result.stderr


def test_reload_refuses_a_broken_file_and_signals_nothing(
        config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGHUP, lambda number, frame: received.append(number))
    try:
        config.write_text(CONFIG.replace('schedule = "0 9 * * MON"', 'schedule = "soon"'),
                          encoding="utf-8")
        broken = run_cli("reload", "--config", str(config), "--pid", str(os.getpid()))
        assert broken.exit_code == 2
        assert "channels[0].schedule: not a cron expression: 'soon'" in broken.stderr
        assert received == []
        config.write_text(CONFIG, encoding="utf-8")
        done = run_cli("reload", "--config", str(config), "--pid", str(os.getpid()))
        assert done.exit_code == 0, done.output
        assert received == [signal.SIGHUP]
        gone = run_cli("reload", "--config", str(config), "--pid-file",
                       str(config.parent / "missing.pid"))
        assert gone.exit_code == 2 and "cannot read" in gone.stderr
    finally:
        signal.signal(signal.SIGHUP, previous)
