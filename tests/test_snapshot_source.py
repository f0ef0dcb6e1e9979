"""Offline mode answers only for the snapshot's repository: a notice for another
repository's #N must not be judged against this one's #N."""

from __future__ import annotations

from bot.source import SnapshotSource
from testkit.server_support import example_snapshot


def test_fetch_pull_respects_the_repository() -> None:
    source = SnapshotSource(example_snapshot())  # acme/lumen
    assert source.fetch_pull("acme/lumen", 1201) is not None
    assert source.fetch_pull("ACME/Lumen", 1201) is not None  # GitHub names ignore case
    assert source.fetch_pull("other/repo", 1201) is None
