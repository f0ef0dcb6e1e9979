"""`prdigest serve --log-format json` (here through `PRDIGEST_LOG_FORMAT`, as the
Kubernetes manifests set it), read from its log file after a run under mixed traffic:
every line is one JSON object with its time, level and logger - uvicorn's access lines
too, each with the id its answer's `X-Request-Id` named - and the lines written while a
chat delivery was answered carry its delivery id. `/metrics` has the process figures
and the build."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from testkit.fakes.slack_payloads import SlackPayloads, signed_headers
from testkit.redis_topologies import flush
from testkit.reliability.names import SLACK_CHANNEL
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.world import world, write_config


@contextlib.contextmanager
def _flushed_after(url: str) -> Iterator[None]:
    """The Slack event answered here is remembered in Redis: later tests asking with the
    same event id must not find it answered."""
    try:
        yield
    finally:
        flush(url)


def test_every_line_of_a_json_run_under_traffic_parses(tmp_path: Path, redis_url: str
                                                       ) -> None:
    with world() as fakes, _flushed_after(redis_url):
        config = tmp_path / "prdigest.toml"
        write_config(config, fakes.urls())
        env = {**fakes.env(redis_url), "PRDIGEST_LOG_FORMAT": "json"}
        server = ServeProcess(config, env, tmp_path / "serve.log").start()
        ids = {}
        try:
            # First a chat question whose answer reads GitHub (the cache is cold): the
            # lines written while answering it carry its delivery id.
            payloads = SlackPayloads()
            body = json.dumps(payloads.event_callback(payloads.app_mention(
                "<@UBOT0001> digest 2026-W29", channel=SLACK_CHANNEL))).encode()
            mention = httpx.post(f"{server.url}/slack/events", content=body, timeout=10,
                                 headers={**signed_headers(body),
                                          "Content-Type": "application/json",
                                          "X-Request-Id": "lb-7f3a"})
            assert mention.headers["x-request-id"] == "lb-7f3a"  # the proxy's own id kept
            deadline = time.monotonic() + 60
            while not fakes.slack.posted("chat.postMessage"):
                assert time.monotonic() < deadline, "the mention was not answered"
                time.sleep(0.1)
            for path in ("/healthz", "/livez", "/readyz", "/", "/reports/acme/lumen",
                         "/reports/acme/lumen/2026-W29?lang=en", "/nowhere", "/metrics"):
                answer = httpx.get(f"{server.url}{path}", timeout=30)
                ids[answer.headers["x-request-id"]] = (path, answer.status_code)
            scrape = answer.text
            refused = httpx.post(f"{server.url}/github/webhook", content=b"{}", timeout=10)
            ids[refused.headers["x-request-id"]] = ("/github/webhook", refused.status_code)
            time.sleep(0.5)
        finally:
            server.stop()
    lines = server.log.read_text().splitlines()
    parsed = [json.loads(line) for line in lines]  # every line, or this raises
    assert len(parsed) > 10
    for line in parsed:
        assert {"time", "level", "logger", "message"} <= line.keys(), line
    access = [line for line in parsed if line["logger"] == "uvicorn.access"]
    seen = {line["request_id"]: (line["path"].split("?")[0], line["status"])
            for line in access}
    for rid, (path, status) in ids.items():
        assert seen[rid] == (path.split("?")[0], status)
    assert "lb-7f3a" in seen
    delivered = {line["delivery_id"] for line in parsed
                 if line["logger"] == "bot.github.budget" and "delivery_id" in line}
    assert delivered == {"event:Ev00000001"}  # the Slack event answered
    assert any(line["logger"] == "uvicorn.error" for line in parsed)  # startup lines too
    assert "process_resident_memory_bytes" in scrape
    assert 'prdigest_build_info{python="' in scrape
