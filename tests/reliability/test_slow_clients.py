"""Slow clients cannot hold `prdigest serve`: a connection beyond `max_connections` is
turned away at once, one that has not sent its request within `read_timeout_seconds`
is closed (a byte now and then buys no time), a request head beyond
`max_header_bytes` is refused - the process's open descriptors stay bounded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.slow_clients import head_answer, slow_clients, whole_head_answer

pytestmark = pytest.mark.slow  # slow clients in real seconds

MAX_CONNECTIONS = 40
READ_TIMEOUT = 2.0
SLOW = 300


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    folder = tmp_path_factory.mktemp("slow")
    config = folder / "prdigest.toml"
    config.write_text(f"[server]\nmax_connections = {MAX_CONNECTIONS}\n"
                      f"read_timeout_seconds = {READ_TIMEOUT}\nkeep_alive_seconds = 2\n"
                      "max_header_bytes = 16384\n", encoding="utf-8")
    process = ServeProcess(config, {}, Path(folder) / "serve.log").start()
    try:
        yield process
    finally:
        process.stop()


def test_slow_connections_are_refused_beyond_the_limit_and_closed_after_the_timeout(
        server: ServeProcess) -> None:
    assert server.process is not None
    outcome = slow_clients(server.process.pid, server.port, connections=SLOW,
                           wait=READ_TIMEOUT + 3)
    # Each connection holds one descriptor; a few more for the 503s still closing.
    assert outcome.held <= MAX_CONNECTIONS + 10, outcome
    assert outcome.refused >= SLOW - MAX_CONNECTIONS - 5, outcome
    assert outcome.closed_in_time == SLOW, outcome
    assert outcome.final_fds <= outcome.baseline_fds + 5, outcome
    assert httpx.get(f"{server.url}/healthz", timeout=5).status_code == 200


def test_a_request_head_beyond_the_cap_is_refused(server: ServeProcess) -> None:
    answer = head_answer(server.port, 64 * 1024)
    assert answer.startswith(b"HTTP/1.1 400") or answer == b"closed", answer[:80]
    assert httpx.get(f"{server.url}/healthz", timeout=5).status_code == 200


def test_a_whole_request_head_beyond_the_cap_is_refused_however_it_arrives(
        server: ServeProcess) -> None:
    for size in (17 * 1024, 100 * 1024):
        answer = whole_head_answer(server.port, size)
        assert answer.startswith(b"HTTP/1.1 400") or answer == b"closed", (size, answer[:80])
    assert whole_head_answer(server.port, 8 * 1024).startswith(b"HTTP/1.1 200")


def test_a_quick_client_is_still_served_on_a_kept_alive_connection(
        server: ServeProcess) -> None:
    with httpx.Client(base_url=server.url, timeout=5) as client:
        codes = [client.get("/healthz").status_code for _ in range(3)]
    assert codes == [200, 200, 200]


def test_a_private_reports_key_never_reaches_the_access_log(tmp_path: Path) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text('[repos."acme/vault"]\nprivate = true\n', encoding="utf-8")
    log = tmp_path / "serve.log"
    server = ServeProcess(config, {"PRDIGEST_REPORT_SECRET": "s3cret-signing"}, log).start()
    try:
        key = "k3y-0f-the-vault-9f8e7d"
        for query in (f"?key={key}", f"?lang=en&key={key}"):
            answer = httpx.get(f"{server.url}/reports/acme/vault{query}", timeout=5)
            assert answer.status_code == 404
    finally:
        server.stop()
    written = log.read_text(errors="replace")
    assert "/reports/acme/vault?key=<redacted>" in written  # the request is still logged
    assert "lang=en&key=<redacted>" in written
    assert key not in written
