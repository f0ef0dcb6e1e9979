"""Where the shipped templates and catalogs live, installed or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def template_dir() -> Path:
    """`bot/templates` inside a wheel; the repository's `templates/` in a checkout."""
    packaged = Path(__file__).resolve().parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "templates"
