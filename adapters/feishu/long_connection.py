"""Feishu's long connection (`lark_oapi.ws.Client`), for a bot without a public URL.

lark-oapi 1.7.5's client has no stop() and runs the event loop it grabbed at import
time; so it runs here in a thread of its own, with a loop of its own. Its module is
imported there, when the connection starts: it imports the SDK's event dispatcher,
and with it every service's event processors, which a webhook-mode bot never needs.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lark_oapi.core.enum import LogLevel

if TYPE_CHECKING:
    from lark_oapi.ws.client import Client as SocketClient

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
        self._ws_thread: threading.Thread | None = None
        self._ws_loop: asyncio.AbstractEventLoop | None = None
        self._ws_client: SocketClient | None = None
        self._ws_stopping = False

    @property
    def started(self) -> bool:
        return self._ws_thread is not None

    @property
    def running(self) -> bool:
        return self._ws_thread is not None and self._ws_thread.is_alive()

    def start(self) -> None:
        """Open the connection in its thread; idempotent."""
        if self._ws_thread is not None:
            return
        self._ws_stopping = False
        self._ws_thread = threading.Thread(target=self._run_long_connection,
                                           name="feishu-long-connection", daemon=True)
        self._ws_thread.start()

    async def stop(self) -> None:
        """Close the connection and wait (a few seconds at most) for its thread."""
        if self._ws_thread is not None:
            await asyncio.to_thread(self._stop_long_connection)

    def _run_long_connection(self) -> None:
        """Thread body. lark_oapi.ws.client keeps the event loop of its import in a
        module global and runs it with run_until_complete, which fails inside a running
        loop; so this thread makes its own loop and puts it there first (one long
        connection per process)."""
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        import lark_oapi.ws.client as lark_ws_client

        previous = lark_ws_client.loop
        lark_ws_client.loop = loop
        self._ws_loop = loop
        dispatcher = self._make_dispatcher()
        client = lark_ws_client.Client(self._app_id, self._app_secret,
                                       event_handler=dispatcher, domain=self._domain,
                                       auto_reconnect=self._auto_reconnect,
                                       log_level=LogLevel.WARNING)
        self._ws_client = client
        try:
            client.start()
        except RuntimeError:
            if not self._ws_stopping:
                logger.exception("feishu: long connection stopped")
        except Exception as exc:
            logger.error("feishu: long connection failed: %s", exc)
        finally:
            self._shut_down_ws_loop(loop, client)
            lark_ws_client.loop = previous

    @staticmethod
    def _shut_down_ws_loop(loop: asyncio.AbstractEventLoop, client: SocketClient) -> None:
        # lark_oapi.ws.Client has no stop() in 1.7.5: turn reconnecting off, cancel its
        # tasks (receive loop, pings) and close the socket, then the loop.
        client._auto_reconnect = False
        tasks = asyncio.all_tasks(loop)
        for task in tasks:
            task.cancel()
        try:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(client._disconnect())
        except Exception as exc:
            logger.info("feishu: long connection cleanup: %s", type(exc).__name__)
        finally:
            loop.close()

    def _stop_long_connection(self, timeout: float = 5.0) -> None:
        self._ws_stopping = True
        loop, thread = self._ws_loop, self._ws_thread
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout)
        self._ws_thread = None
        self._ws_loop = None
        self._ws_client = None
