"""A newcomer's first command, cold: `make demo` into a new virtual environment (the
hash-checked runtime lock, then the project), and what it leaves on disk. Target: under
a minute on the project's machine.

    python -m bench.setup [--keep]

The environment is made in a temporary folder (`make demo VENV=...`), so the working
`.venv` is left alone; pip's download cache is what it is on the machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 60.0


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the environment made")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="prdigest-demo-"))
    venv = folder / "venv"
    started = time.perf_counter()
    done = subprocess.run(["make", "-s", "demo", f"VENV={venv}"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return 1
    printed = done.stdout.count("\n")
    size = folder_size(venv) / 2**20
    verdict = "ok" if seconds < TARGET_SECONDS else "over target"
    print(f"make demo, cold: {seconds:.1f} s (target < {TARGET_SECONDS:.0f} s: {verdict}); "
          f"{size:.0f} MiB in the environment; the digest printed {printed} lines")
    if not args.keep:
        subprocess.run(["rm", "-rf", str(folder)], check=False)
    else:
        print(f"kept {venv}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
