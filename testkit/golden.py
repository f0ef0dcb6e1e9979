"""Golden files - what a renderer sends, kept under tests/golden/ and compared byte for
byte. One variable rewrites every one of them: `UPDATE_GOLDEN=1` runs the tests writing
their output as the new goldens (read the diff before committing it)."""

from __future__ import annotations

import os

VARIABLE = "UPDATE_GOLDEN"


def updating() -> bool:
    """Whether this run writes the goldens instead of checking them."""
    return os.environ.get(VARIABLE) == "1"
