"""Snapshots are read and written exactly as prdigest.snapshot/1 defines them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bot.errors import SnapshotError
from bot.snapshot import decode_snapshot, encode_snapshot, read_snapshot, write_snapshot
from testkit import EXAMPLES


def _example() -> dict[str, Any]:
    return json.loads((EXAMPLES / "snapshot.json").read_text())


def test_example_round_trips_field_by_field(tmp_path: Path) -> None:
    original = _example()
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    target = tmp_path / "out.json"
    write_snapshot(snapshot, target)
    assert json.loads(target.read_text()) == original


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["verl-2026-07.json", "vllm-2026-W29.json"])
def test_real_snapshots_round_trip(shared_data: Path, name: str) -> None:
    raw = (shared_data / name).read_bytes()
    assert json.loads(encode_snapshot(decode_snapshot(raw))) == json.loads(raw)


def _mutate(path: list[Any], value: Any) -> bytes:
    data = _example()
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(data).encode()


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["pulls", 3, "merged_at"], "last tuesday", "pulls[3].merged_at: not an ISO 8601 time"),
        (["pulls", 3, "merged_at"], "2026-07-14T06:12:00",
         "pulls[3].merged_at: an ISO 8601 time needs a time zone"),
        (["pulls", 0, "state"], "shipped", "pulls[0].state: invalid value 'shipped'"),
        (["pulls", 1, "title"], _DELETE, "pulls[1]: missing required field 'title'"),
        (["pulls", 2, "number"], "12", "pulls[2].number: expected int, got str"),
        (["pulls", 0, "files", 1, "additions"], None,
         "pulls[0].files[1].additions: expected int, got null"),
        (["pulls", 0, "review_threads", 0, "resolved"], "yes",
         "pulls[0].review_threads[0].resolved: expected bool | null, got str"),
        (["pulls", 0, "checks"], "green", "pulls[0].checks: invalid value 'green'"),
        (["format"], "prdigest.snapshot/2", "format: expected 'prdigest.snapshot/1'"),
        (["repository"], _DELETE, "missing required field 'repository'"),
    ],
)
def test_bad_field_is_named_by_its_path(path: list[Any], value: Any, message: str) -> None:
    with pytest.raises(SnapshotError) as caught:
        decode_snapshot(_mutate(path, value), source="s.json")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_duplicate_pull_numbers_are_rejected() -> None:
    data = _example()
    data["pulls"].append(dict(data["pulls"][0]))
    with pytest.raises(SnapshotError, match=r"duplicate PR #1201"):
        decode_snapshot(json.dumps(data).encode())


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b"null", b"{\"format\": 1}"])
def test_not_a_snapshot_at_all(raw: bytes) -> None:
    with pytest.raises(SnapshotError):
        decode_snapshot(raw)


def test_unknown_values_stay_null() -> None:
    snapshot = read_snapshot(EXAMPLES / "snapshot.json")
    pull = next(p for p in snapshot.pulls if p.number == 1205)
    assert pull.review_threads is not None
    assert pull.review_threads[0].resolved is None
    assert pull.review_threads[0].outdated is None


def test_a_snapshot_speaks_for_the_weeks_between_its_first_pr_and_its_fetch() -> None:
    from bot.errors import UncoveredWeekError
    from bot.snapshot import require_week
    from bot.week import week_period

    snapshot = read_snapshot(EXAMPLES / "snapshot.json")  # fetched 2026-07-20 01:00 UTC
    require_week(snapshot, "2026-W29", week_period("2026-W29", "UTC"))
    # The week it was fetched in holds the hours before the fetch: partly covered.
    require_week(snapshot, "2026-W30", week_period("2026-W30", "UTC"))
    with pytest.raises(UncoveredWeekError, match="2026-W31 starts after"):
        require_week(snapshot, "2026-W31", week_period("2026-W31", "UTC"))
    with pytest.raises(UncoveredWeekError, match="2026-W20 ends before the first PR"):
        require_week(snapshot, "2026-W20", week_period("2026-W20", "UTC"))
    # Without a fetch time or PRs there is nothing to say a week is outside.
    bare = msgspec.structs.replace(snapshot, fetched_at=None, pulls=())
    require_week(bare, "2030-W01", week_period("2030-W01", "UTC"))
