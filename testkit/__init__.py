"""Fakes of the platforms and GitHub, Redis launchers and service harnesses, shared by
the tests and the benchmarks (not shipped in the wheel)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
