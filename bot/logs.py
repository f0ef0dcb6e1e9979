"""How the service's log lines look, in one place: one format for every line - the
bot's, the SDKs', uvicorn's access log - as plain text or one JSON object per line.

Every line carries its time (UTC), level and logger, and the id of the request or the
delivery it belongs to where there is one (`request_id`: the HTTP request, echoed in
its `X-Request-Id` answer header; `delivery_id`: a chat delivery or a weekly post's
ledger slot), kept in context variables that follow the work into its tasks.

A warning repeated from one place (the same logger and message template) is written
once, then at most once a `window` seconds, saying how many like it were left out
since; the left-out lines are counted by logger and level (`suppressed`, read by
`/metrics` as `prdigest_log_lines_suppressed_total`). A replica down once logged a
WARNING per ledger write: 2,102 lines in one run.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from bot.clock import SYSTEM_CLOCK, Clock

LogFormat = Literal["text", "json"]
FORMATS: tuple[LogFormat, ...] = ("text", "json")

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "prdigest_request_id", default=None)
delivery_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "prdigest_delivery_id", default=None)

ACCESS_LOGGER = "uvicorn.access"
ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")
"""The arguments of uvicorn's access line, in its order."""
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
REPEAT_WINDOW_SECONDS = 60.0


@contextlib.contextmanager
def delivery(key: str | None) -> Iterator[None]:
    """Lines logged inside are marked with this delivery's id (and the tasks begun
    inside carry it on)."""
    token = delivery_id.set(key)
    try:
        yield
    finally:
        delivery_id.reset(token)


def _ids() -> dict[str, str]:
    found = {}
    if (request := request_id.get()) is not None:
        found["request_id"] = request
    if (key := delivery_id.get()) is not None:
        found["delivery_id"] = key
    return found


def _utc(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{int(record.msecs):03d}Z"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: `time`, `level`, `logger`, `message`, the ids, the
    access line's fields (`client`, `method`, `path`, `status`, ...) and `exception`
    (the traceback as text) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {"time": _utc(record), "level": record.levelname,
                                "logger": record.name, "message": record.getMessage()}
        line |= _ids()
        if record.name == ACCESS_LOGGER and isinstance(record.args, tuple) and \
                len(record.args) == len(ACCESS_FIELDS):
            line |= dict(zip(ACCESS_FIELDS, record.args, strict=True))
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """`2026-07-20 09:00:01,234 INFO bot.delivery.schedule: posted ... [request=...]`:
    the time on every line, uvicorn's access lines included."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        ids = _ids()
        if not ids:
            return text
        tail = " ".join(f"[{name.removesuffix('_id')}={value}]" for name, value in ids.items())
        head, newline, rest = text.partition("\n")  # after the message, before a traceback
        return f"{head} {tail}{newline}{rest}"


class RepeatLimit(logging.Filter):
    """Writes a repeated warning (same logger, level and message template) once, then at
    most once every `window` seconds with the count of those left out meanwhile; every
    line left out is counted in `suppressed` by (logger, level). The window is on
    `clock` (logging is process-wide: the process's one, `SYSTEM_CLOCK`)."""

    def __init__(self, window: float = REPEAT_WINDOW_SECONDS, *, level: int = logging.WARNING,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__()
        self.window = window
        self.level = level
        self.clock = clock
        self.suppressed: Counter[tuple[str, str]] = Counter()
        self._last: dict[tuple[str, int, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != self.level:
            return True
        key = (record.name, record.levelno, str(record.msg))
        now = self.clock.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last[0] < self.window:
                self._last[key] = (last[0], last[1] + 1)
                self.suppressed[(record.name, record.levelname)] += 1
                return False
            left_out = last[1] if last is not None else 0
            self._last[key] = (now, 0)
            if len(self._last) > 10_000:  # bounded: the oldest places are forgotten
                for old in sorted(self._last, key=lambda k: self._last[k][0])[:5_000]:
                    del self._last[old]
        if left_out:
            record.msg = f"{record.msg} ({left_out} more like this in the last " \
                         f"{self.window:.0f} s not written)"
        return True


REPEATS = RepeatLimit()
"""The process's one limit: logging is process-wide, and so is what it left out."""


def log_config(fmt: LogFormat, level: str, redactions: Iterable[logging.Filter] = ()
               ) -> dict[str, Any]:
    """A `logging.config.dictConfig` for the whole process (and for uvicorn, which
    applies it again): one stream handler on the root logger with the format, the
    redactions and the repeat limit; uvicorn's loggers, the access log included, hand
    their lines to it."""
    filters: dict[str, Any] = {f"redact_{n}": {"()": lambda f=one: f}
                               for n, one in enumerate(redactions)}
    filters["repeats"] = {"()": lambda: REPEATS}
    formatter = JsonFormatter if fmt == "json" else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"prdigest": {"()": formatter}},
        "filters": filters,
        "handlers": {"prdigest": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr",
                                  "formatter": "prdigest", "filters": list(filters)}},
        "root": {"handlers": ["prdigest"], "level": level.upper()},
        "loggers": {name: {"handlers": [], "propagate": True}
                    for name in ("uvicorn", "uvicorn.error", ACCESS_LOGGER)},
    }
