"""`prdigest digest`: formats, languages, and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from testkit import EXAMPLES

SNAPSHOT = str(EXAMPLES / "snapshot.json")
CONFIG = str(EXAMPLES / "prdigest.toml")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("fmt", ["markdown", "text", "json"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_format_and_language(fmt: str, lang: str) -> None:
    code, out, err = _run("digest", "acme/lumen", "--week", "2026-W29", "--snapshot", SNAPSHOT,
                          "--config", CONFIG, "--format", fmt, "--lang", lang)
    assert code == 0, err
    assert "1201" in out
    if fmt == "json":
        assert json.loads(out)["counts"]["total"] == 16


def test_same_input_same_digest() -> None:
    args = ("digest", "acme/lumen", "--week", "2026-W29", "--snapshot", SNAPSHOT, "--config",
            CONFIG, "--format", "json")
    assert _run(*args)[1] == _run(*args)[1]


def _bad_snapshot(tmp_path: Path) -> str:
    data = json.loads(Path(SNAPSHOT).read_text())
    data["pulls"][3]["merged_at"] = "not a time"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("bad-snapshot", "pulls[3].merged_at: not an ISO 8601 time"),
        ("bad-week", "week '2026-W60'"),
        ("other-repo", "holds acme/lumen, not other/repo; write one of other/repo with "
                       "`prdigest snapshot other/repo --week W -o FILE`"),
        ("missing-file", "cannot read"),
        ("bad-config", "unknown field 'bogus'"),
    ],
)
def test_user_errors_are_one_line_with_exit_code_2(tmp_path: Path, case: str,
                                                   message: str) -> None:
    repo, week, snapshot, config = "acme/lumen", "2026-W29", SNAPSHOT, CONFIG
    if case == "bad-snapshot":
        snapshot = _bad_snapshot(tmp_path)
    elif case == "bad-week":
        week = "2026-W60"
    elif case == "other-repo":
        repo = "other/repo"
    elif case == "missing-file":
        snapshot = str(tmp_path / "absent.json")
    elif case == "bad-config":
        config = str(tmp_path / "bad.toml")
        Path(config).write_text("bogus = 1\n")
    code, out, err = _run("digest", repo, "--week", week, "--snapshot", snapshot,
                          "--config", config)
    assert code == 2
    assert out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_focus_topics_come_first() -> None:
    code, out, _ = _run("digest", "acme/lumen", "--week", "2026-W29", "--snapshot", SNAPSHOT,
                        "--config", CONFIG, "--format", "json", "--topics", "trainer")
    assert code == 0
    assert json.loads(out)["topics"][0]["name"] == "trainer"


@pytest.mark.parametrize(("week", "why"), [
    ("2026-W31", "starts after this snapshot of acme/lumen was fetched"),
    ("2026-W20", "ends before the first PR of this snapshot of acme/lumen"),
])
def test_a_week_outside_the_snapshot_says_so_in_one_line(week: str, why: str) -> None:
    code, out, err = _run("digest", "acme/lumen", "--week", week, "--snapshot", SNAPSHOT,
                          "--config", CONFIG, "--format", "text")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and why in err and week in err
    assert "Traceback" not in err


@pytest.mark.realdata
def test_a_real_snapshot_speaks_only_for_the_weeks_it_holds(shared_data: Path) -> None:
    snapshot = str(shared_data / "verl-2026-07.json")
    args = ("--snapshot", snapshot, "--config", CONFIG, "--format", "json")
    code, out, _ = _run("digest", "verl-project/verl", "--week", "2026-W29", *args)
    assert code == 0 and json.loads(out)["counts"]["total"] == 28
    code, _, err = _run("digest", "verl-project/verl", "--week", "2026-W35", *args)
    assert code == 2 and "fetched (2026-08-22 00:00 UTC)" in err
    code, _, err = _run("digest", "verl-project/verl", "--week", "2026-W27", *args)
    assert code == 2 and "first PR" in err
