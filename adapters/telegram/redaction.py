"""Keeping the bot token out of logs: it is part of every Bot API URL."""

from __future__ import annotations

import logging

__all__ = ["LOGGERS_SEEING_THE_TOKEN", "RedactToken"]


# Loggers that may write a Bot API URL (which holds the token) or an error quoting it.
LOGGERS_SEEING_THE_TOKEN = (
    "httpx", "telegram", "telegram.Bot", "telegram.ext", "telegram.ext.ExtBot",
    "telegram.ext.Updater", "telegram.ext.Application", "telegram.request.BaseRequest",
    "telegram.request.HTTPXRequest", "aiohttp", "aiohttp.client",
)


class RedactToken(logging.Filter):
    """Replaces the bot token in log records: httpx logs every request URL, PTB logs its
    base URL and `InvalidToken` quotes the token."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self._token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self._token in message:
            record.msg = message.replace(self._token, "<token>")
            record.args = ()
        if record.exc_info and not record.exc_text:
            # Formatters reuse `exc_text`, so the traceback is written redacted.
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = text.replace(self._token, "<token>")
        return True
