"""Where the real PR snapshots are: `shared/data` beside the checkout (`../shared/data`)
or beside the folder that holds it (a worktree under `wt/` finds `../../shared/data`)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path:
    """The first `shared/data` found going up from the checkout (the nearest when none)."""
    candidates = [parent / "shared" / "data" for parent in ROOT.parents[:2]]
    return next((c for c in candidates if c.is_dir()), candidates[0])
