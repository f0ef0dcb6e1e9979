"""Code at the top of a package (`src/click/core.py`, `flask/app.py`, gin's
`context.go`) is the project's Core: the tests beside it do not make a library's fix
a change "in Tests" (click's pager fix, starlette's UploadFile rollover)."""

from __future__ import annotations

import pytest

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.engine.areas import folder_area
from bot.models import Snapshot
from testkit.pulls import merged_pull


@pytest.mark.parametrize(("paths", "package"), [
    (("flask/app.py", "tests/test_basic.py"), "flask"),
    (("src/click/_termui_impl.py", "tests/test_termui.py", "CHANGES.rst"), "click"),
    (("starlette/datastructures.py", "tests/test_datastructures.py"), "starlette"),
    (("context.go", "context_test.go"), "gin"),
])
def test_code_at_the_top_of_the_package_is_core(paths: tuple[str, ...], package: str) -> None:
    assert folder_area(paths, package) == "core"


@pytest.mark.parametrize(("paths", "area"), [
    (("tests/test_termui.py",), "tests"),  # a PR of tests alone is still Tests
    (("src/click/shell/zsh.py", "tests/test_shell.py"), "shell"),  # a folder names its own
    (("README.md",), "docs"),
    (("setup.py",), "build"),
])
def test_other_files_keep_their_areas(paths: tuple[str, ...], area: str) -> None:
    assert folder_area(paths, "click") == area


def test_a_library_week_is_not_said_to_be_in_tests() -> None:
    pulls = (
        merged_pull(1, "Fix the pager on Windows", ("src/click/_termui_impl.py",
                                                      "tests/test_termui.py")),
        merged_pull(2, "Show the progress bar's last step", ("src/click/termui.py",
                                                              "tests/test_termui.py")),
        merged_pull(3, "Parametrize deprecation tests", ("tests/test_options.py",)),
    )
    digest = build_digest(Snapshot(repository="pallets/click", pulls=pulls), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    assert {t.title: len(t.pulls) + len(t.others) for t in digest.themes} == {
        "Core": 2, "Tests": 1}


@pytest.mark.parametrize(("path", "area"), [
    (".dumi/pages/index/components/Contributors.tsx", "docs"),
    (".vitepress/config.ts", "docs"),
    (".vscode/settings.json", "build"),  # the team's tools
])
def test_a_documentation_site_hidden_at_the_top_is_docs(path: str, area: str) -> None:
    assert folder_area((path,), "ant-design") == area


@pytest.mark.parametrize("path", ["vite.config.ts", "eslint.config.js", ".eslintrc.js",
                                  "install.sh", "noxfile.py", "jest.config.js"])
def test_a_tools_config_or_script_at_the_top_is_not_core(path: str) -> None:
    assert folder_area((path,), "app") != "core"
