"""Malformed headers and parameters from anyone on the internet: each is a 4xx with at
most one log line and no traceback - Slack timestamps that are not numbers, non-ASCII
signatures, a non-ASCII report key, weeks before year 1 - and a private repository's
report answers a bad key exactly as an unknown repository does, in as much time."""

from __future__ import annotations

import statistics
import time

import httpx
import pytest

from testkit.fakes.slack_payloads import signed_headers as slack_headers
from testkit.reliability.harness import LogCapture, Service
from testkit.reliability.names import PRIVATE_REPO

SLACK_BODY = b"token=x&command=%2Fprdigest&text=help"
BAD_TIMESTAMPS = ["abc", "", "1.7e9", "9" * 5000, "-0", " 1 ", "\u0661\u0662"]


def _quiet(logs: LogCapture, before: int, requests: int = 1) -> None:
    lines = logs.lines[before:]
    assert "Traceback" not in "\n".join(lines), "\n".join(lines)
    told = [line for line in lines if not line.startswith(("DEBUG", "INFO httpx:"))]
    assert len(told) <= requests, lines


@pytest.mark.parametrize("stamp", BAD_TIMESTAMPS)
async def test_a_slack_timestamp_that_is_not_a_number_is_a_401(
        service: Service, all_logs: LogCapture, stamp: str) -> None:
    headers = dict(slack_headers(SLACK_BODY), **{"X-Slack-Request-Timestamp": stamp})
    before = len(all_logs.lines)
    answer = await service.post("/slack/events", content=SLACK_BODY,
                                headers={k: v.encode() for k, v in headers.items()})
    assert answer.status_code == 401
    _quiet(all_logs, before)


@pytest.mark.parametrize(("route", "header"), [
    ("/slack/events", "X-Slack-Signature"),
    ("/github/webhook", "X-Hub-Signature-256"),
    ("/feishu/events", "X-Lark-Signature"),
    ("/telegram/webhook", "X-Telegram-Bot-Api-Secret-Token"),
])
@pytest.mark.parametrize("value", ["v0=\u00e9\u00e9", "sha256=\u00e9", "\u00ff" * 64])
async def test_a_non_ascii_signature_is_a_401(service: Service, all_logs: LogCapture,
                                              route: str, header: str, value: str) -> None:
    body = SLACK_BODY if route == "/slack/events" else b"{}"
    headers = {**slack_headers(body), "X-GitHub-Event": "pull_request",
               "X-GitHub-Delivery": "d-1", header: value}
    before = len(all_logs.lines)
    answer = await service.post(route, content=body,
                                headers={k: v.encode() for k, v in headers.items()})
    assert answer.status_code == 401
    _quiet(all_logs, before)


@pytest.mark.parametrize("week", ["0000-W01", "0001-W01", "9999-W52", "0000W53"])
async def test_a_week_outside_the_calendar_is_a_404(service: Service, all_logs: LogCapture,
                                                    week: str) -> None:
    before = len(all_logs.lines)
    answer = await service.get(f"/reports/acme/lumen/{week}")
    assert answer.status_code == 404
    _quiet(all_logs, before)


@pytest.mark.parametrize("key", ["%C3%A9", "%00", "%FF", "a" * 300, ""])
async def test_a_bad_key_gets_the_answer_an_unknown_repository_gets(
        service: Service, all_logs: LogCapture, key: str) -> None:
    before = len(all_logs.lines)
    private = await service.get(f"/reports/{PRIVATE_REPO}?key={key}")
    unknown = await service.get(f"/reports/acme/nothing-here?key={key}")
    assert private.status_code == unknown.status_code == 404
    assert private.content == unknown.content

    def told(answer: httpx.Response) -> dict[str, str]:
        """Its headers less the request's own id, which every answer carries."""
        return {k: v for k, v in answer.headers.items() if k != "x-request-id"}

    assert told(private) == told(unknown)
    assert private.headers["x-request-id"] != unknown.headers["x-request-id"]
    _quiet(all_logs, before, requests=2)


async def test_a_bad_key_takes_as_long_as_an_unknown_repository(service: Service) -> None:
    async def median(path: str) -> float:
        times = []
        for _ in range(40):
            started = time.perf_counter()
            await service.get(path)
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    await median("/reports/acme/warm-up?key=x")
    private = await median(f"/reports/{PRIVATE_REPO}?key=%C3%A9")
    unknown = await median("/reports/acme/nothing-here?key=%C3%A9")
    assert abs(private - unknown) < max(0.3 * min(private, unknown), 0.002), \
        (private, unknown)
