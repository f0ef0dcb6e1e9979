"""One address cannot starve everyone with slow connections: beyond
`server.max_connections_per_client` its connections are answered 503 and closed at
once, so `/healthz` asked from another address is answered while 600 slow, reconnecting
connections come from the first (loopback: 127.0.0.2 floods, 127.0.0.3 asks)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.slow_clients import probes_during_flood

pytestmark = pytest.mark.slow  # real connections held open and timed out

FLOOD = 600
PER_CLIENT = 50


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    folder = tmp_path_factory.mktemp("flood")
    config = folder / "prdigest.toml"
    # The defaults but the read timeout: slow connections are closed and come back.
    config.write_text(f"[server]\nmax_connections_per_client = {PER_CLIENT}\n"
                      "read_timeout_seconds = 5\n", encoding="utf-8")
    process = ServeProcess(config, {}, Path(folder) / "serve.log").start(timeout=180)
    try:
        yield process
    finally:
        process.stop()


def test_healthz_from_another_address_answers_while_one_address_floods(
        server: ServeProcess) -> None:
    outcome = probes_during_flood(server.port, connections=FLOOD, seconds=15.0)
    assert outcome.flood.opened >= FLOOD, outcome  # the flood really ran...
    assert outcome.flood.refused >= FLOOD - PER_CLIENT, outcome  # ...and was capped
    assert outcome.probes >= 20 and outcome.share >= 0.95, outcome
    log = server.log.read_text(errors="replace")
    assert "max_connections_per_client reached" in log
