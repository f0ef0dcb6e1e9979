"""The CLI as a test runs it: `prdigest ...` in-process, and the previews it prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from bot.cli import app
from testkit import EXAMPLES

SNAPSHOT = str(EXAMPLES / "snapshot.json")


CONFIG = str(EXAMPLES / "prdigest.toml")


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


def preview_of(*args: str, config: str = CONFIG) -> list[dict[str, Any]]:
    """The parts a `--format <platform>` command printed, from the example snapshot (and
    the example config, unless told)."""
    result = run_cli(*args, "--snapshot", SNAPSHOT, "--config", config)
    assert result.exit_code == 0, result.stderr
    parts: list[dict[str, Any]] = json.loads(result.stdout)
    return parts


def real_week(shared_data: Path, repo: str, file: str, fmt: str, lang: str,
              *extra: str) -> str:
    """What `prdigest digest REPO --week 2026-W29 --snapshot <shared data>/FILE` prints
    in `fmt` and `lang` (`extra`: more options, such as a config)."""
    result = run_cli("digest", repo, "--week", "2026-W29", "--snapshot",
                     str(shared_data / file), "--format", fmt, "--lang", lang, *extra)
    assert result.exit_code == 0, result.output
    return str(result.stdout)
