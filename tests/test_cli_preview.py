"""The CLI's first-hour surface: `--version`, `--week last|this`, help that reads as prose,
and the previews' shape (what they hold is checked against the fakes in
tests/contract/test_previews.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.cli.app import week_for
from bot.config import load_config
from testkit import EXAMPLES
from testkit.cli import CONFIG, SNAPSHOT, preview_of, run_cli


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    result = run_cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"prdigest {version('prdigest')}"


def test_last_and_this_week_are_the_repository_time_zones() -> None:
    settings = load_config(EXAMPLES / "prdigest.toml")  # acme/lumen: Asia/Shanghai
    # Sunday 17:00 UTC is already Monday 01:00 in Shanghai: a new week there.
    now = datetime(2026, 7, 19, 17, 0, tzinfo=UTC)
    assert week_for("this", settings, "acme/lumen", now) == "2026-W30"
    assert week_for("last", settings, "acme/lumen", now) == "2026-W29"
    assert week_for("2026-w3", settings, "acme/lumen", now) == "2026-W03"


def test_week_last_of_a_snapshot_is_the_week_before_its_data() -> None:
    last = run_cli("digest", "acme/lumen", "--week", "last", "--snapshot", SNAPSHOT, "--config",
                CONFIG, "--format", "json")
    assert last.exit_code == 0, last.stderr
    assert json.loads(last.stdout)["week"] == "2026-W28"
    this = run_cli("digest", "acme/lumen", "--week", "this", "--snapshot", SNAPSHOT, "--config",
                CONFIG, "--format", "json")
    assert json.loads(this.stdout)["week"] == "2026-W29"


@pytest.mark.parametrize("command", ["digest", "ask", "post", "chat", "serve", "snapshot"])
def test_help_shows_no_bool_type_and_describes_format_and_lang(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.exit_code == 0
    assert "<bool>" not in result.stdout
    if command in ("digest", "ask"):
        text = " ".join(result.stdout.split())
        assert "slack, telegram, feishu" in text.replace("│", " ").replace("  ", " ") or \
            "slack," in text
        assert "Language" in text or "language" in text


def test_help_reflows_docstring_paragraphs() -> None:
    # The docstring breaks "an / error reply" across source lines; help joins them.
    result = run_cli("ask", "--help")
    assert "an error reply" in " ".join(result.stdout.split())


def test_the_ask_preview_is_one_request_per_part_for_each_platform() -> None:
    slack = preview_of("ask", "risks for #1201", "--repo", "acme/lumen", "--format", "slack")
    assert [p["method"] for p in slack] == ["chat.postMessage"]
    assert slack[0]["payload"]["channel"] == "C0123456"  # the configured Slack channel
    telegram = preview_of("ask", "risks for #1201", "--format", "telegram")
    assert telegram[0]["payload"]["chat_id"] == -1001234567890
    assert "#1201" in telegram[0]["payload"]["text"]
    feishu = preview_of("ask", "summary #1203", "--format", "feishu")
    card = json.loads(feishu[0]["payload"]["content"])
    assert "1203" in json.dumps(card, ensure_ascii=False)


def test_an_unknown_log_level_is_a_usage_error_naming_the_levels() -> None:
    result = run_cli("serve", "--config", CONFIG, "--log-level", "bogus")
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "debug" in result.output and "warning" in result.output


def test_the_snapshot_option_reads_as_a_file_in_help() -> None:
    for command in ("digest", "post"):
        result = run_cli(command, "--help")
        assert "list[Path]" not in result.stdout
        assert "<file>" in result.stdout
