"""Key PRs pick some out: docs, tests and style written for the code are key only as a
large change (dubbo-go's week of comment-and-test PRs had all 25 of 25 key); a feature
or a fix of any size still is."""

from __future__ import annotations

import pytest

from bot.config import RepoConfig
from bot.engine import build_digest
from bot.models import Snapshot
from testkit.pulls import merged_pull


@pytest.mark.parametrize(("title", "lines", "key"), [
    ("docs(triple): improve comments of the client options", 120, False),
    ("test(registry): add unit tests for the nacos listener", 200, False),
    ("docs: add a guide to AI-assisted contributions", 600, True),
    ("fix(protocol): return standard errors in SetHeader", 12, True),
    ("feat(cluster): add a weighted router", 40, True),
])
def test_writing_for_the_code_is_key_only_when_large(title: str, lines: int,
                                                     key: bool) -> None:
    pull = merged_pull(1, title, ("protocol/triple/client.go",), lines=lines)
    digest = build_digest(Snapshot(repository="apache/dubbo-go", pulls=(pull,)), "2026-W29",
                          repo_config=RepoConfig(), lang="en")
    assert (digest.counts.key == 1) is key
