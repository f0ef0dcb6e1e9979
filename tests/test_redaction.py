"""Report keys stay out of every log line a handler writes, whatever logger made the
record and however the key is quoted: in a URL's query, inside a request body passed
as a dict argument (slack_sdk's DEBUG line), or in a traceback."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from bot.redaction import redact_report_keys

KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def written() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    redact_report_keys([handler], [KEY])
    logger = logging.getLogger("some.sdk.client")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield logger, stream
    finally:
        logger.removeHandler(handler)


def test_a_key_in_a_dict_argument_is_redacted(written: tuple[logging.Logger, io.StringIO]
                                              ) -> None:
    logger, stream = written
    body = {"blocks": [{"text": f"<https://bot.example/reports/acme/vault/2026-W29?lang=en"
                                f"&amp;key={KEY}|Full report>"}]}
    logger.debug("Sending a request - json: %s", body)
    logger.debug("escaped in JSON: %s", {"url": f"https://bot.example/r?key%3D{KEY}"})
    text = stream.getvalue()
    assert KEY not in text
    assert text.count("<redacted>") == 2 and "Sending a request - json:" in text


def test_a_key_in_a_query_or_a_traceback_is_redacted(
        written: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = written
    logger.info("GET %s", "/reports/acme/vault?key=anything-at-all")
    try:
        raise ValueError(f"bad link {KEY}")
    except ValueError:
        logger.exception("failed")
    text = stream.getvalue()
    assert "anything-at-all" not in text and KEY not in text
    assert "/reports/acme/vault?key=<redacted>" in text and "ValueError: bad link" in text


def test_the_access_log_keeps_its_arguments() -> None:
    """uvicorn's access formatter unpacks the record's arguments: they stay five."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    redact_report_keys([handler], [KEY])
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1,
                               '%s - "%s %s HTTP/%s" %d', ("1.2.3.4", "GET",
                               f"/reports/acme/vault?key={KEY}", "1.1", 200), None)
    assert all(f.filter(record) for f in handler.filters)
    assert isinstance(record.args, tuple) and len(record.args) == 5
    assert KEY not in record.getMessage()
