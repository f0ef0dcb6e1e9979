"""`server.max_connections` above the open-file limit: checked at start. The soft limit
is raised toward the hard one; where that cannot make room, the connection limits are
lowered to fit with a warning, so connections beyond them are answered 503 while
`/healthz` still gets a descriptor - instead of the server stalling at the limit,
silently."""

from __future__ import annotations

import logging
import resource
from pathlib import Path

import httpx
import pytest

from bot.config import ServerConfig
from bot.errors import UserError
from bot.web.open_files import RESERVED_FILES, fit_open_files
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.slow_clients import slow_clients

pytestmark = pytest.mark.slow  # prdigest serve under a real open-file limit

INFINITY = resource.RLIM_INFINITY


class Limits:
    def __init__(self, soft: int, hard: int, *, settable: bool = True) -> None:
        self.soft, self.hard, self.settable = soft, hard, settable

    def get(self) -> tuple[int, int]:
        return self.soft, self.hard

    def set_soft(self, soft: int, hard: int) -> None:
        if not self.settable or (self.hard != INFINITY and soft > self.hard):
            raise ValueError("not allowed")
        self.soft = soft


def fit(server: ServerConfig, limits: Limits) -> ServerConfig:
    return fit_open_files(server, get=limits.get, set_soft=limits.set_soft)


def test_a_soft_limit_below_the_need_is_raised_toward_the_hard_one() -> None:
    limits = Limits(1024, 1 << 20)
    server = ServerConfig(max_connections=2000)
    assert fit(server, limits) == server
    assert limits.soft == 2000 + RESERVED_FILES


def test_beyond_the_hard_limit_the_connections_are_lowered_with_a_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    limits = Limits(256, 1024)
    with caplog.at_level(logging.WARNING):
        fitted = fit(ServerConfig(max_connections=2000, max_connections_per_client=3000),
                     limits)
    assert fitted.max_connections == 1024 - RESERVED_FILES
    assert fitted.max_connections_per_client == fitted.max_connections
    warned = [r.getMessage() for r in caplog.records]
    assert any("server.max_connections = 2000" in m and "1024" in m for m in warned), warned


def test_a_limit_that_cannot_be_raised_lowers_the_connections_too() -> None:
    fitted = fit(ServerConfig(max_connections=500), Limits(300, 4096, settable=False))
    assert fitted.max_connections == 300 - RESERVED_FILES


def test_enough_open_files_change_nothing() -> None:
    server = ServerConfig(max_connections=500)
    assert fit(server, Limits(INFINITY, INFINITY)) == server
    assert fit(server, Limits(4096, 4096)) == server


def test_a_limit_with_no_room_for_a_connection_is_refused() -> None:
    with pytest.raises(UserError, match="open-file limit"):
        fit(ServerConfig(max_connections=10), Limits(RESERVED_FILES, RESERVED_FILES))


def test_serve_under_a_low_open_file_limit_keeps_healthz_answering(tmp_path: Path) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text("[server]\nmax_connections = 2000\nmax_connections_per_client = 2000\n"
                      "read_timeout_seconds = 30\n", encoding="utf-8")
    server = ServeProcess(config, {}, tmp_path / "serve.log", open_files=256).start(180)
    try:
        assert server.process is not None
        outcome = slow_clients(server.process.pid, server.port, connections=400, wait=1.0)
        codes = [httpx.get(f"{server.url}/healthz", timeout=5).status_code for _ in range(5)]
    finally:
        server.stop()
    # Beyond the lowered limit, a connection is turned away at once (not left hanging).
    assert outcome.refused >= 400 - (256 - RESERVED_FILES), outcome
    assert codes == [200] * 5
    log = server.log.read_text(errors="replace")
    assert "server.max_connections = 2000" in log and "serving at most" in log
