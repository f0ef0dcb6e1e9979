"""Feishu's long connection (`lark_oapi.ws.Client`), for a bot without a public URL.

lark-oapi 1.7.5's client has no stop() and runs the event loop it grabbed at import
time; so it runs in a thread of its own, with a loop of its own
(`adapters.loop_thread`). Its module is
imported there, when the connection starts: it imports the SDK's event dispatcher,
and with it every service's event processors, which a webhook-mode bot never needs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from lark_oapi.core.enum import LogLevel

from adapters.loop_thread import LoopThread, wind_down

__all__ = ["LongConnection"]

logger = logging.getLogger(__name__)


class LongConnection:
    """One app's long connection; events go to the dispatcher `make_dispatcher` builds
    (they arrive decrypted, so it needs no keys)."""

    def __init__(self, *, app_id: str, app_secret: str, domain: str, auto_reconnect: bool,
                 make_dispatcher: Callable[[], Any]) -> None:
        self._app_id = app_id
        self._app_secret = app_secret
        self._domain = domain
        self._auto_reconnect = auto_reconnect
        self._make_dispatcher = make_dispatcher
        self._thread = LoopThread("feishu-long-connection", self._run_long_connection)

    @property
    def running(self) -> bool:
        return self._thread.running

    def start(self) -> None:
        """Open the connection in its thread; idempotent."""
        self._thread.start()

    async def stop(self) -> None:
        """Close the connection and wait (a few seconds at most) for its thread."""
        await self._thread.stop()

    def _run_long_connection(self, loop: asyncio.AbstractEventLoop) -> None:
        """Thread body, in the thread's own loop. lark_oapi.ws.client keeps the event
        loop of its import in a module global and runs it with run_until_complete, which
        fails inside a running loop; so that loop is put there first (one long
        connection per process)."""
        import lark_oapi.ws.client as lark_ws_client

        previous = lark_ws_client.loop
        lark_ws_client.loop = loop
        dispatcher = self._make_dispatcher()
        client = lark_ws_client.Client(self._app_id, self._app_secret,
                                       event_handler=dispatcher, domain=self._domain,
                                       auto_reconnect=self._auto_reconnect,
                                       log_level=LogLevel.WARNING)
        try:
            client.start()
        except RuntimeError:
            if not self._thread.stopping:
                logger.exception("feishu: long connection stopped")
        except Exception as exc:
            logger.error("feishu: long connection failed: %s", exc)
        finally:
            # lark_oapi.ws.Client has no stop() in 1.7.5: turn reconnecting off, cancel
            # its tasks (receive loop, pings) and close the socket, then the loop.
            client._auto_reconnect = False
            wind_down(loop, client._disconnect, "feishu: long connection")
            lark_ws_client.loop = previous
