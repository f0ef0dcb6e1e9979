"""What every platform's webhook route does alike before and after its own checks: a
secret compared in constant time, headers named as an SDK spells them, a signed
timestamp's age judged, the body read as
one JSON object of a bounded size, and a delivery another process holds answered
"send it again later" (`bot.chat.inbound.RETRY_LATER`). Each platform words its own
answers; these say only what went wrong.
"""

from __future__ import annotations

import hmac
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse

from bot.chat.inbound import RETRY_LATER

__all__ = ["Unreadable", "is_fresh", "json_object", "retry_later", "same_secret", "spelled_as"]

Problem = Literal["too large", "not JSON", "not an object"]


class Unreadable(Exception):
    """A body that is not a JSON object of at most the route's size: `problem` says
    which, `status` is the HTTP status that says so (413 or 400)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        self.problem = problem
        self.status = 413 if problem == "too large" else 400


async def json_object(request: Request, max_bytes: int) -> dict[str, Any]:
    """The request's body as a JSON object, refused (`Unreadable`) when its declared or
    read length is over `max_bytes`, when it is not JSON (or nested too deep to read)
    or not an object."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise Unreadable("too large")
    body = await request.body()
    if len(body) > max_bytes:
        raise Unreadable("too large")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested too deep to read
        raise Unreadable("not JSON") from None
    if not isinstance(data, dict):
        raise Unreadable("not an object")
    return data


def spelled_as(headers: Mapping[str, str], names: Iterable[str]) -> dict[str, str]:
    """The request's headers among `names`, under the names as `names` spell them: an
    ASGI server lower-cases them, an SDK reading a plain dict looks them up as written."""
    canonical = {name.lower(): name for name in names}
    return {canonical[name.lower()]: value for name, value in headers.items()
            if name.lower() in canonical}


def same_secret(given: str, expected: str | None) -> bool:
    """Whether a request carries the secret it should, compared in constant time (as
    bytes: a non-ASCII header is simply wrong); never when none is expected."""
    wanted = (expected or "").encode()
    return bool(wanted) and hmac.compare_digest(
        given.encode("utf-8", "surrogateescape"), wanted)


def is_fresh(timestamp: str | None, now: float, window_seconds: float) -> bool:
    """False for a request timestamp outside `now ± window` or one that is not a number.

    A request without the header passes here: the platform's signature check, which
    covers the timestamp, rejects it whenever the request must be signed.
    """
    if timestamp is None:
        return True
    try:
        sent = float(timestamp.strip())
    except ValueError:
        return False
    return math.isfinite(sent) and abs(now - sent) <= window_seconds


def retry_later(body: dict[str, Any]) -> JSONResponse:
    """`body` as the answer to a delivery another process holds: a status the platform
    re-sends after, and when (`Retry-After`)."""
    return JSONResponse(body, status_code=RETRY_LATER.status, headers=RETRY_LATER.headers)
