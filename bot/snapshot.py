"""Read and write `prdigest.snapshot/1` files exactly as the design defines them."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import msgspec

from bot.errors import SnapshotError
from bot.models import SNAPSHOT_FORMAT, Snapshot
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


def check_repository(snapshot: Snapshot, repo: str, path: Path) -> Snapshot:
    """`snapshot` itself when it holds `repo`; a `SnapshotError` naming `path` otherwise."""
    if snapshot.repository.lower() != repo.lower():
        raise SnapshotError(
            f"{path}: holds {snapshot.repository}, not {repo} (repository: unknown in this "
            "snapshot)"
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
