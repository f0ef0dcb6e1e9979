"""Where the real PR snapshots are: `../shared/data` beside the checkout, or the folder
`PRDIGEST_SHARED_DATA` names (a checkout kept elsewhere reads them in place)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path:
    """`$PRDIGEST_SHARED_DATA` when set, else `shared/data` beside the checkout."""
    named = os.environ.get("PRDIGEST_SHARED_DATA")
    return Path(named) if named else ROOT.parent / "shared" / "data"
