"""Keeping credentials that travel in URLs out of the logs: a private report's `?key=`
in the access log, a Slack `response_url` in the SDK's debug lines, and the private
reports' keys themselves wherever a line quotes them (a chat SDK's DEBUG line holds the
whole request body, the digest's signed report link in it)."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterable

REPORT_KEY = re.compile(r"([?&;]key=)[^&\s\"']*", re.IGNORECASE)
"""The signed key of a private report page, in a logged path or URL."""

URL_PATH = re.compile(r"(https?://[^/\s\"']+/)[^\s\"',]+", re.IGNORECASE)
"""Everything after the host of a URL (a Slack `response_url` is a credential)."""

REDACTED = "<redacted>"


class Redact(logging.Filter):
    """Rewrites what `pattern` matches in every record passing through (message and
    traceback): group 1 is kept, the rest becomes `replacement`."""

    def __init__(self, pattern: re.Pattern[str], replacement: str = REDACTED) -> None:
        super().__init__()
        self.pattern = pattern
        self.replacement = replacement

    def clean(self, text: str) -> str:
        """`text` as this filter writes it (an error quoted outside a log record)."""
        return self.pattern.sub(lambda match: match.group(1) + self.replacement, text)

    def attach(self, loggers: Iterable[str]) -> None:
        """Filter every record the named loggers write themselves (not their children's)."""
        for name in loggers:
            logging.getLogger(name).addFilter(self)

    def detach(self, loggers: Iterable[str]) -> None:
        """Stop filtering what the named loggers write."""
        for name in loggers:
            logging.getLogger(name).removeFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        # Message and arguments each, so formatters that read the arguments (uvicorn's
        # access log builds its request line from them) still find them in place.
        if isinstance(record.msg, str):
            record.msg = self.clean(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(self.clean(a) if isinstance(a, str) else a
                                for a in record.args)
        with contextlib.suppress(Exception):  # a record that cannot format: left as is
            message = record.getMessage()
            cleaned = self.clean(message)
            if cleaned != message:  # inside an argument that is not a string
                record.msg, record.args = cleaned, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            # Formatters reuse `exc_text`, so the traceback is written redacted (by every
            # filter in turn, the first having formatted it).
            record.exc_text = self.clean(record.exc_text)
        return True


def known_values(values: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern for `Redact` that finds each of `values` anywhere (group 1 empty); None
    when there are none."""
    listed = sorted({re.escape(v) for v in values if v}, key=len, reverse=True)
    return re.compile(f"()(?:{'|'.join(listed)})") if listed else None


def report_key_filters(keys: Iterable[str]) -> list[Redact]:
    """The filters that keep report keys out of a log: `?key=...` in any URL, and each
    of `keys` (the private reports' keys) wherever it appears."""
    filters = [Redact(REPORT_KEY)]
    pattern = known_values(keys)
    if pattern is not None:
        filters.append(Redact(pattern))
    return filters


def redact_report_keys(handlers: Iterable[logging.Handler], keys: Iterable[str]) -> None:
    """Every record these handlers write passes `report_key_filters` first: a filter on
    a handler sees the records of every library's logger, not of one logger only."""
    filters = report_key_filters(keys)
    for handler in handlers:
        for one in filters:
            handler.addFilter(one)
