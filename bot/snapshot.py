"""Read and write `prdigest.snapshot/1` files exactly as the design defines them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import msgspec

from bot.errors import SnapshotError, UncoveredWeekError
from bot.models import SNAPSHOT_FORMAT, Period, PullRequest, Snapshot
from bot.validation import describe

_decoder = msgspec.json.Decoder(Snapshot)
_encoder = msgspec.json.Encoder()


def decode_snapshot(raw: bytes, *, source: str = "snapshot") -> Snapshot:
    """Decode and validate; the error names the first bad field's path."""
    try:
        head = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise SnapshotError(f"{source}: not valid JSON ({exc})") from None
    if not isinstance(head, dict):
        raise SnapshotError(f"{source}: expected a JSON object")
    if head.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(
            f"{source}: format: expected {SNAPSHOT_FORMAT!r}, got {head.get('format')!r}"
        )
    try:
        snapshot = _decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise SnapshotError(f"{source}: {describe(exc)}") from None
    seen: set[int] = set()
    for index, pull in enumerate(snapshot.pulls):
        if pull.number in seen:
            raise SnapshotError(f"{source}: pulls[{index}].number: duplicate PR #{pull.number}")
        seen.add(pull.number)
    return snapshot


def read_snapshot(path: Path) -> Snapshot:
    """Load a snapshot file; a missing or bad file is a `SnapshotError`."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return decode_snapshot(raw, source=str(path))


def encode_snapshot(snapshot: Snapshot) -> bytes:
    """Snapshot JSON, every field written (unknowns as null), pretty enough to diff."""
    return msgspec.json.format(_encoder.encode(snapshot), indent=1) + b"\n"


def write_snapshot(snapshot: Snapshot, path: Path) -> None:
    """Write atomically so a crash never leaves half a file behind."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(encode_snapshot(snapshot))
    tmp.replace(path)


def snapshot_for(repo: str, path: Path) -> Snapshot:
    """The snapshot at `path`, which must hold `repo`."""
    return check_repository(read_snapshot(path), repo, path)


def snapshots_for(repos: Sequence[str], paths: Sequence[Path]) -> list[Snapshot]:
    """One snapshot per repository, in the repositories' order: the one file for one
    repository (which must hold it), else each repository's file found by the name it
    holds, whatever order the files were given in."""
    if len(repos) == 1 and len(paths) == 1:
        return [snapshot_for(repos[0], paths[0])]
    if len(set(map(str.lower, repos))) != len(repos):
        raise SnapshotError("a repository is named twice")
    if len(paths) != len(repos):
        raise SnapshotError(f"give one --snapshot per repository: {len(repos)} repositories, "
                        f"{len(paths)} files")
    held = {data.repository.lower(): data for data in read_snapshots(paths)}
    missing = [repo for repo in repos if repo.lower() not in held]
    if missing:
        names = ", ".join(sorted(s.repository for s in held.values()))
        raise SnapshotError(f"no --snapshot holds {missing[0]} (the files hold {names})")
    return [held[repo.lower()] for repo in repos]


def read_snapshots(paths: Sequence[Path]) -> list[Snapshot]:
    """Several snapshot files, in the order given, each holding a repository of its own
    (two files of one repository would leave it unclear which one speaks)."""
    found: list[Snapshot] = []
    seen: set[str] = set()
    for path in paths:
        data = read_snapshot(path)
        if data.repository.lower() in seen:
            raise SnapshotError(f"{path}: holds {data.repository}, as another --snapshot does")
        seen.add(data.repository.lower())
        found.append(data)
    return found


def check_repository(snapshot: Snapshot, repo: str, path: Path) -> Snapshot:
    """`snapshot` itself when it holds `repo`; a `SnapshotError` naming `path` otherwise."""
    if snapshot.repository.lower() != repo.lower():
        raise SnapshotError(
            f"{path}: holds {snapshot.repository}, not {repo}; write one of {repo} with "
            f"`prdigest snapshot {repo} --week W -o FILE`"
        )
    return snapshot


def data_time(snapshot: Snapshot) -> datetime | None:
    """The latest moment the snapshot records, so `digest` and `last week` mean the
    weeks of the data, not of today, when answering from a file."""
    moments = [
        moment
        for pull in snapshot.pulls
        for moment in (pull.merged_at, pull.closed_at, pull.created_at, pull.updated_at)
        if moment is not None
    ]
    return max(moments, default=snapshot.fetched_at)


def _counted_at(pull: PullRequest) -> datetime | None:
    """When the PR counts in a week (as `bot.week.belongs_to_week` places it)."""
    if pull.state == "merged":
        return pull.merged_at or pull.closed_at
    return pull.closed_at if pull.state == "closed" else pull.created_at


def require_week(snapshot: Snapshot, week: str, period: Period) -> None:
    """Nothing when the snapshot can speak for `week`; an `UncoveredWeekError` saying
    why not when the week starts after the data was fetched or ends before its first
    PR (an empty report would claim a quiet week the data never saw)."""
    fetched = snapshot.fetched_at
    if fetched is not None and period.since >= fetched:
        raise UncoveredWeekError(
            f"{week} starts after this snapshot of {snapshot.repository} was fetched "
            f"({fetched:%Y-%m-%d %H:%M} UTC): it holds no data for that week")
    moments = [m for m in (_counted_at(p) for p in snapshot.pulls) if m is not None]
    if moments and period.until <= min(moments):
        raise UncoveredWeekError(
            f"{week} ends before the first PR of this snapshot of {snapshot.repository} "
            f"({min(moments):%Y-%m-%d}): it holds no data for that week")
