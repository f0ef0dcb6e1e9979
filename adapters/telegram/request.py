"""python-telegram-bot's networking on one pooled aiohttp session.

PTB sends through `BaseRequest`, an interface it documents for other HTTP libraries.
Its default (`HTTPXRequest`) costs about a millisecond of CPU per Bot API call in
httpx and httpcore; on aiohttp, which the Slack side already uses, a call costs a
fraction of that, and answers reach chats sooner when many questions arrive at once.
Timeouts and errors keep PTB's meaning: `TimedOut` for every timeout, `NetworkError`
for every other transport failure, never with the request's path (`/bot<token>/method`:
it holds the token), only the Bot API method it calls.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import msgspec
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from adapters.http import Pool, RequestFailed, Unanswered, exchange, phased_timeout
from adapters.sending import AnswerLost

__all__ = ["AiohttpRequest", "NoAnswer"]

# PTB's own defaults for HTTPXRequest, in seconds.
DEFAULT_READ_TIMEOUT = 5.0
DEFAULT_WRITE_TIMEOUT = 5.0
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_POOL_TIMEOUT = 1.0
# Uploads get longer to write, as in PTB (`media_write_timeout`).
DEFAULT_MEDIA_WRITE_TIMEOUT = 20.0


class NoAnswer(TimedOut, AnswerLost):
    """The request went out (the connection was made) and no answer came: it timed out
    while waiting, or the connection dropped. Telegram may have done what it asked."""


def _seconds(value: ODVInput[float], default: float | None) -> float | None:
    return default if isinstance(value, DefaultValue) else value


class AiohttpRequest(BaseRequest):
    """`BaseRequest` on a `Pool` of at most `connection_pool_size` connections (proxies
    from HTTPS_PROXY & co, as httpx reads them too); the session is made in
    `initialize` (inside the running loop)."""

    def __init__(
        self,
        *,
        connection_pool_size: int = 16,
        read_timeout: float | None = DEFAULT_READ_TIMEOUT,
        write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
        connect_timeout: float | None = DEFAULT_CONNECT_TIMEOUT,
        pool_timeout: float | None = DEFAULT_POOL_TIMEOUT,
        media_write_timeout: float | None = DEFAULT_MEDIA_WRITE_TIMEOUT,
    ) -> None:
        self._pool = Pool(connection_pool_size, headers={"User-Agent": self.USER_AGENT})
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        self._pool.session()

    async def shutdown(self) -> None:
        await self._pool.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        session = self._pool.current
        if session is None:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        uploads = request_data.multipart_data if request_data is not None else {}
        data = _body(request_data, uploads)
        read = _seconds(read_timeout, self._read_timeout)
        write = _seconds(write_timeout,
                         self._media_write_timeout if uploads else self._write_timeout)
        connect = _seconds(connect_timeout, self._connect_timeout)
        pool = _seconds(pool_timeout, self._pool_timeout)
        timeout = phased_timeout(pool=pool, connect=connect, write=write, read=read)
        try:
            return await exchange(session, method, url, data=data, timeout=timeout,
                                  platform="Telegram")
        except RequestFailed as err:  # Telegram did not take it
            raise (TimedOut() if err.timed_out else NetworkError(str(err))) from err.__cause__
        except Unanswered as err:
            raise NoAnswer(str(err)) from err.__cause__


def _body(request_data: RequestData | None, uploads: dict[str, Any]) -> Any:
    """The call's parameters as a JSON body (the Bot API takes JSON for every call
    without files; PTB's `parameters` are JSON-ready, nested objects included), or
    multipart form data when the call uploads files. Percent-encoding a long HTML
    message as a form costs more than the rest of the request."""
    if request_data is None:
        return None
    if not uploads:
        return aiohttp.BytesPayload(msgspec.json.encode(request_data.parameters),
                                    content_type="application/json")
    fields = request_data.json_parameters
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    for name, upload in uploads.items():
        if isinstance(upload, tuple):
            filename, content, *rest = upload
            form.add_field(name, content, filename=filename,
                           content_type=rest[0] if rest else "application/octet-stream")
        else:
            form.add_field(name, upload)
    return form

