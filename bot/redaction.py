"""Keeping credentials that travel in URLs out of the logs: a private report's `?key=`
in the access log, a Slack `response_url` in the SDK's debug lines."""

from __future__ import annotations

import logging
import re

REPORT_KEY = re.compile(r"([?&;]key=)[^&\s\"']*", re.IGNORECASE)
"""The signed key of a private report page, in a logged path or URL."""

URL_PATH = re.compile(r"(https?://[^/\s\"']+/)[^\s\"',]+", re.IGNORECASE)
"""Everything after the host of a URL (a Slack `response_url` is a credential)."""

REDACTED = "<redacted>"


class Redact(logging.Filter):
    """Rewrites what `pattern` matches in every record passing through (message and
    traceback): group 1 is kept, the rest becomes `<redacted>`."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        super().__init__()
        self.pattern = pattern

    def _clean(self, text: str) -> str:
        return self.pattern.sub(lambda match: match.group(1) + REDACTED, text)

    def filter(self, record: logging.LogRecord) -> bool:
        # Message and arguments each, so formatters that read the arguments (uvicorn's
        # access log builds its request line from them) still find them in place.
        if isinstance(record.msg, str):
            record.msg = self._clean(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(self._clean(a) if isinstance(a, str) else a
                                for a in record.args)
        if record.exc_info and not record.exc_text:
            # Formatters reuse `exc_text`, so the traceback is written redacted.
            record.exc_text = self._clean(logging.Formatter().formatException(record.exc_info))
        return True
