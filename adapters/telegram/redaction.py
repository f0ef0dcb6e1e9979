"""Keeping the bot token out of logs: it is part of every Bot API URL, which httpx logs
with every request; PTB logs its base URL and `InvalidToken` quotes the token. The
shared `bot.redaction.Redact` writes `<token>` for it in these loggers' records, their
tracebacks included, and in the errors the adapter quotes."""

from __future__ import annotations

import re

from bot.redaction import Redact

__all__ = ["LOGGERS_SEEING_THE_TOKEN", "token_redaction"]


# Loggers that may write a Bot API URL (which holds the token) or an error quoting it.
LOGGERS_SEEING_THE_TOKEN = (
    "httpx", "telegram", "telegram.Bot", "telegram.ext", "telegram.ext.ExtBot",
    "telegram.ext.Updater", "telegram.ext.Application", "telegram.request.BaseRequest",
    "telegram.request.HTTPXRequest", "aiohttp", "aiohttp.client",
)


def token_redaction(token: str) -> Redact:
    """The filter (and `clean` of an error's text) that writes `<token>` for `token`."""
    return Redact(re.compile("()" + re.escape(token)), replacement="<token>")
