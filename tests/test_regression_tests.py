"""The fix-share advice asks for regression tests only of the fixes that change no test:
gin W26 asked "Make sure #4702, #4695, #4698 each come with a regression test" of three
fixes that each change a `*_test.go`. What a test file is is decided once
(`bot.engine.areas.is_test_file`), for every ecosystem. Fixtures of our own."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.engine.areas import is_test_file
from bot.engine.classify import classify
from bot.engine.suggest import Lead, is_code, suggest
from bot.i18n import translator
from bot.models import NameCount, PullRequest, Snapshot
from testkit.pulls import merged_pull

MERGED = datetime(2026, 7, 15, 3, tzinfo=UTC)
WEEK = "2026-W29"


@pytest.mark.parametrize("path", [
    "tests/test_app.py", "src/app/test_cache.py", "conftest.py", "context_test.go",
    "binding/testdata/form.json", "web/src/app.test.ts", "web/src/app.spec.tsx",
    "web/src/__tests__/app.js", "spec/models/user_spec.rb", "src/test/java/a/CacheTest.java",
    "Tests/AppTests/RouterTests.swift", "packages/svelte/tests/print/samples/a/input.svelte",
])
def test_every_ecosystems_test_file_is_one(path: str) -> None:
    assert is_test_file(path)
    assert not is_code(path)  # "Add tests around context_test.go" asks nothing


@pytest.mark.parametrize("path", ["context.go", "src/latest.py", "src/attest/sign.py",
                                  "docs/testing.md", "contest.go", "src/testing.ts",
                                  "web/src/spec.ts"])
def test_code_is_no_test_file(path: str) -> None:
    assert not is_test_file(path)


def test_a_pr_of_go_tests_alone_is_a_test_change() -> None:
    pull = _pull(1, "Use a temporary folder on WSL", ("context_test.go",))
    assert classify(pull, RepoConfig()).type == "test"


def _fix_share(leads: tuple[Lead, ...]) -> tuple[str, ...]:
    types = (NameCount(name="fix", count=5, share=0.5, pulls=(1, 2, 3, 4, 5)),)
    return suggest((), (), types, (), [], translator("en"), leads=leads)


def test_only_the_fixes_without_a_test_are_named() -> None:
    (advice,) = _fix_share((Lead(number=4, type="fix", tested=True),
                            Lead(number=9, type="fix"), Lead(number=2, type="fix")))
    assert advice.startswith("Make sure #9, #2 each come with a regression test")
    (one,) = _fix_share((Lead(number=4, type="fix", tested=True), Lead(number=9, type="fix")))
    assert one.startswith("Make sure #9 comes with a regression test: bug fixes are 50%")


def test_fixes_that_each_change_a_test_call_for_no_tests() -> None:
    assert _fix_share((Lead(number=4, type="fix", tested=True),
                       Lead(number=2, type="fix", tested=True))) == ()
    # No key fix to look at: the share alone still asks where the bugs came from.
    (generic,) = _fix_share((Lead(number=9, type="feat"),))
    assert "where the bugs came from" in generic


def _pull(number: int, title: str, paths: tuple[str, ...]) -> PullRequest:
    return merged_pull(number, title, paths, lines=40, when=MERGED)


def test_a_week_of_tested_fixes_names_only_the_untested_one() -> None:
    week = (_pull(1, "fix(context): skip chmod on existing dirs", ("context.go",
                                                                     "context_test.go")),
            _pull(2, "fix(recovery): record recovered panics", ("recovery.go",
                                                                "recovery_test.go")),
            _pull(3, "fix(render): escape the JSON", ("render/json.go",)),
            _pull(4, "docs: fix a comment", ("README.md",)))
    text = " ".join(build_digest(Snapshot(repository="gin-gonic/gin", pulls=week), WEEK,
                                 repo_config=RepoConfig(), lang="en").suggestions)
    assert "Make sure #3 comes with a regression test" in text
    covered = _pull(3, "fix(render): escape the JSON", ("render/json.go",
                                                        "render/render_test.go"))
    tested = build_digest(Snapshot(repository="gin-gonic/gin",
                                   pulls=(*week[:2], covered, week[3])),
                          WEEK, repo_config=RepoConfig(), lang="en")
    assert tested.counts.key == 3
    assert "regression test" not in " ".join(tested.suggestions)


def test_the_chinese_advice_says_each_only_of_several() -> None:
    t = translator("zh")
    fixes = (NameCount(name="fix", count=5, share=0.5, pulls=(1, 2, 3, 4, 5)),)
    (one,) = suggest((), (), fixes, (), [], t, leads=(Lead(number=9, type="fix"),))
    (two,) = suggest((), (), fixes, (), [], t, leads=(Lead(number=9, type="fix"),
                                                      Lead(number=2, type="fix")))
    assert "#9" in one and "都" not in one
    assert "#9、#2" in two and "都补充了回归测试" in two
