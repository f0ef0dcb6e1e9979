"""The log's one format (`bot.logs`): every line with its time, level, logger and the
request or delivery it belongs to, as text or as JSON; a warning repeated from one place
written once a minute with the count of those left out, which /metrics reports."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.logs import JsonFormatter, RepeatLimit, TextFormatter, delivery, request_id
from bot.web.metrics import Metrics
from testkit.clock import VirtualClock


def metric(text: str, name: str, **labels: str) -> float:
    """One sample of a scrape (0 when absent)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and labels.items() <= sample.labels.items():
                return float(sample.value)
    return 0.0


@pytest.fixture
def limited() -> Iterator[tuple[logging.Logger, io.StringIO, RepeatLimit, VirtualClock]]:
    stream, clock = io.StringIO(), VirtualClock()
    limit = RepeatLimit(60, clock=clock)
    handler = logging.StreamHandler(stream)
    handler.addFilter(limit)
    handler.setFormatter(TextFormatter())
    logger = logging.getLogger("bot.store.ledger.test")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        yield logger, stream, limit, clock
    finally:
        logger.removeHandler(handler)
        logger.propagate = True


def test_a_warning_repeated_2102_times_is_one_line_and_a_count(
        limited: tuple[logging.Logger, io.StringIO, RepeatLimit, VirtualClock]) -> None:
    logger, stream, limit, clock = limited
    for n in range(2102):
        logger.warning("ledger: no replica took write %d within 200 ms", n)
        clock.advance(0.01)  # 21 s in all: within one window
    assert stream.getvalue().count("\n") == 1
    assert limit.suppressed == {("bot.store.ledger.test", "WARNING"): 2101}
    clock.advance(60)
    logger.warning("ledger: no replica took write %d within 200 ms", 9999)
    last = stream.getvalue().splitlines()[-1]
    assert last.endswith("no replica took write 9999 within 200 ms (2101 more like this "
                         "in the last 60 s not written)")
    # Other messages and other levels are not held back by it.
    logger.warning("another warning")
    logger.info("ledger: no replica took write %d within 200 ms", 1)
    logger.info("ledger: no replica took write %d within 200 ms", 2)
    assert stream.getvalue().count("\n") == 5


def test_the_lines_left_out_are_counted_in_metrics() -> None:
    clock = VirtualClock()
    limit = RepeatLimit(60, clock=clock)
    record = logging.LogRecord("bot.store.redis.failover", logging.WARNING, __file__, 1,
                               "replica gone: %s", ("r1",), None)
    assert [limit.filter(record) for _ in range(5)] == [True, False, False, False, False]
    text = Metrics(repeats=limit).exposition().decode()
    assert metric(text, "prdigest_log_lines_suppressed_total",
                  logger="bot.store.redis.failover", level="WARNING") == 4


def test_every_metrics_scrape_has_the_process_figures_and_the_build() -> None:
    text = Metrics().exposition().decode()
    assert metric(text, "process_resident_memory_bytes") > 10 * 2**20
    assert metric(text, "process_open_fds") > 0
    build = re.search(r'^prdigest_build_info\{python="([\d.]+)",version="([^"]+)"\} 1\.0$',
                      text, flags=re.M)
    assert build and build[2] == "0.1.0"


def _record(name: str, msg: str, args: tuple[object, ...] = ()) -> logging.LogRecord:
    return logging.LogRecord(name, logging.INFO, __file__, 1, msg, args, None)


def test_a_json_line_has_the_time_level_logger_and_ids() -> None:
    formatter = JsonFormatter()
    token = request_id.set("abc123")
    try:
        with delivery("slack:Ev0001"):
            line = json.loads(formatter.format(_record("bot.chat.inbound", "answered %s",
                                                       ("#7",))))
    finally:
        request_id.reset(token)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line.pop("time"))
    assert line == {"level": "INFO", "logger": "bot.chat.inbound", "message": "answered #7",
                    "request_id": "abc123", "delivery_id": "slack:Ev0001"}
    plain = json.loads(formatter.format(_record("bot", "no ids here")))
    assert "request_id" not in plain and "delivery_id" not in plain


def test_an_access_line_keeps_its_fields_in_json_and_its_time_in_text() -> None:
    access = _record("uvicorn.access", '%s - "%s %s HTTP/%s" %d',
                     ("10.0.0.1:5000", "GET", "/healthz", "1.1", 200))
    line = json.loads(JsonFormatter().format(access))
    assert (line["client"], line["method"], line["path"], line["status"]) == \
        ("10.0.0.1:5000", "GET", "/healthz", 200)
    assert line["message"] == '10.0.0.1:5000 - "GET /healthz HTTP/1.1" 200'
    text = TextFormatter().format(access)
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO uvicorn\.access: 10\.0\.0\.1",
                    text)


def test_a_traceback_stays_inside_its_json_line() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("bot", logging.ERROR, __file__, 1, "failed", (), None)
        import sys
        record.exc_info = sys.exc_info()
    text = JsonFormatter().format(record)
    assert "\n" not in text
    assert "ValueError: boom" in json.loads(text)["exception"]
