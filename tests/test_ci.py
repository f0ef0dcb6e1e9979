"""CI runs the test command the README gives - every test - and fails when a test fails;
the quick loop the README and the Makefile name leaves out only what a marker says."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The commands of the README's first shell block (its comments dropped)."""
    block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block is not None
    return [line.split("#")[0].strip() for line in block[1].splitlines() if line.strip()]


def recipe(target: str) -> list[str]:
    """The lines the Makefile runs for `target`."""
    text = (ROOT / "Makefile").read_text()
    found = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert found is not None, target
    return [line.strip() for line in found[1].splitlines()]


def test_ci_runs_the_readme_s_test_command() -> None:
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#")]
    assert "make test-all" in readme_commands()
    assert ci[-1] == "make test-all"


def test_ci_fails_when_a_test_fails() -> None:
    """The script stops at the first failing command, and make's recipe is pytest itself:
    its exit code is not ignored (no `-` prefix, no `|| true`)."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci
    [run] = [line for line in recipe("test-all") if "pytest" in line]
    assert not run.startswith("-") and "||" not in run and ";" not in run
    assert "-m" not in shlex.split(run)  # every test, no marker left out


def test_the_quick_loop_leaves_out_only_marked_tests() -> None:
    [run] = [line for line in recipe("test") if "pytest" in line]
    quick = re.search(r'^QUICK := (.*)$', (ROOT / "Makefile").read_text(), re.M)
    assert quick is not None and "$(QUICK)" in run
    markers = re.findall(r"not (\w+)", quick[1])
    assert set(markers) == {"redis", "failover", "kills", "slow"}
    registered = (ROOT / "pyproject.toml").read_text()
    assert all(f'"{marker}: ' in registered for marker in markers)


def test_one_variable_rewrites_every_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    from testkit.golden import VARIABLE, updating

    readers = [path.relative_to(ROOT) for path in (ROOT / "tests").rglob("*.py")
               if re.search(r"os\.environ\.get\([^)]*GOLDEN", path.read_text())]
    assert readers == []  # every golden test asks testkit.golden
    users = [path for path in (ROOT / "tests").rglob("*.py") if "updating()" in path.read_text()]
    assert len(users) >= 5
    monkeypatch.setenv(VARIABLE, "1")
    assert updating()
    monkeypatch.setenv(VARIABLE, "0")
    assert not updating()
