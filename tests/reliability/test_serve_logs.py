"""What `prdigest serve --log-level debug` writes, read from its log file: a private
report's key never, even inside the request body slack_sdk logs at DEBUG; a refused
Feishu request one line, not one per handler."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from bot.links import report_key
from testkit.fakes.slack_payloads import SlackPayloads, signed_headers
from testkit.reliability.names import PRIVATE_REPO, SECRETS, SLACK_VAULT_CHANNEL
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.world import World, world, write_config


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, redis_server_url: str
           ) -> Iterator[tuple[ServeProcess, World]]:
    folder = tmp_path_factory.mktemp("logs")
    with world() as fakes:
        config = folder / "prdigest.toml"
        write_config(config, fakes.urls())
        server = ServeProcess(config, fakes.env(redis_server_url), folder / "serve.log",
                              log_level="debug").start(timeout=180)
        try:
            yield server, fakes
        finally:
            server.stop()


def _wait_for(found: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not found():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_a_private_reports_key_is_in_no_debug_line(
        served: tuple[ServeProcess, World]) -> None:
    server, fakes = served
    key = report_key(SECRETS["PRDIGEST_REPORT_SECRET"], PRIVATE_REPO)
    payloads = SlackPayloads()
    body = json.dumps(payloads.event_callback(payloads.app_mention(
        "<@UBOT0001> digest 2026-W29", channel=SLACK_VAULT_CHANNEL))).encode()
    answer = httpx.post(f"{server.url}/slack/events", content=body, timeout=10,
                        headers={**signed_headers(body), "Content-Type": "application/json"})
    assert answer.status_code == 200

    def posted_with_the_link() -> bool:
        return key in json.dumps(fakes.slack.posted("chat.postMessage"))

    _wait_for(posted_with_the_link)  # the key really went out, in the request body...
    time.sleep(0.5)
    written = server.log.read_text(errors="replace")
    assert "chat.postMessage" in written and "Sending a request" in written
    assert key not in written  # ...and the DEBUG line quoting that body hides it
    assert "<redacted>" in written


def test_a_refused_feishu_request_is_logged_once(served: tuple[ServeProcess, World]) -> None:
    server, _ = served
    before = server.log.read_text(errors="replace").count("feishu: event refused")
    answer = httpx.post(f"{server.url}/feishu/events", content=b'{"encrypt": "x"}', timeout=10,
                        headers={"Content-Type": "application/json",
                                 "X-Lark-Request-Timestamp": str(int(time.time())),
                                 "X-Lark-Request-Nonce": "n", "X-Lark-Signature": "forged"})
    assert answer.status_code == 401
    time.sleep(0.5)
    written = server.log.read_text(errors="replace")
    assert written.count("feishu: event refused") - before == 1, written[-2000:]
    assert "Traceback" not in written
