"""`prdigest chat` at a real terminal (a pseudo-terminal): the arrow keys recall the last
question instead of printing escape codes, and the history outlives the session."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit import EXAMPLES
from testkit.processes import kill_process

UP = b"\x1b[A"


def _read_until(fd: int, marker: bytes, seen: bytearray, start: int = 0,
                timeout: float = 20.0) -> int:
    """Read until `marker` appears at or after `start`; where it ends."""
    deadline = time.monotonic() + timeout
    while seen.find(marker, start) < 0:
        left = deadline - time.monotonic()
        assert left > 0, f"no {marker!r} in {bytes(seen)[-400:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                seen.extend(os.read(fd, 4096))
            except OSError:
                break
    return seen.find(marker, start) + len(marker)


@pytest.mark.slow  # many CPU seconds: in `make test-all`, not the quick loop
def test_the_up_arrow_asks_the_last_question_again_and_history_is_kept(tmp_path: Path) -> None:
    history = tmp_path / "history"
    main, child = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "chat", "--repo", "acme/lumen", "--snapshot",
         str(EXAMPLES / "snapshot.json"), "--config", str(EXAMPLES / "prdigest.toml"),
         "--lang", "en"],
        stdin=child, stdout=child, stderr=child, close_fds=True,
        env={**os.environ, "PRDIGEST_HISTORY": str(history), "TERM": "xterm"})
    os.close(child)
    seen = bytearray()
    try:
        at = _read_until(main, b"prdigest> ", seen)
        os.write(main, b"summary #1203\r")
        at = _read_until(main, b"save LoRA adapters only", seen, at)
        at = _read_until(main, b"prdigest> ", seen, at)
        os.write(main, UP + b"\r")
        _read_until(main, b"save LoRA adapters only", seen, at)
        assert b"^[[A" not in seen[at:]
        os.write(main, b"quit\r")
        process.wait(timeout=20)
    finally:
        kill_process(process)
        os.close(main)
    assert "summary #1203" in history.read_text()
