"""The CLI as a test runs it: `prdigest ...` in-process, and the previews it prints."""

from __future__ import annotations

import json
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
