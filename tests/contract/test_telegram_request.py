"""PTB's networking on aiohttp: what reaches the wire, and how failures surface.

A real aiohttp server on a free port stands for the Bot API; `AiohttpRequest` is used as
PTB uses it (`post` with `RequestData`), so the errors seen are the ones PTB's callers see.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from telegram import InputFile
from telegram.error import NetworkError, TimedOut
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from adapters.telegram.request import AiohttpRequest
from testkit.redis_server import free_port

TOKEN = "123456:SECRET-token"


class BotApi:
    """Records each request; `delay` holds the answer back."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.delay = 0.0

    async def handle(self, request: web.Request) -> web.Response:
        entry: dict[str, Any] = {"path": request.path, "type": request.content_type,
                                 "agent": request.headers.get("User-Agent", "")}
        if request.content_type == "multipart/form-data":
            reader = await request.multipart()
            parts = {}
            async for part in reader:
                parts[part.name] = (part.filename, await part.read())  # type: ignore[union-attr]
            entry["parts"] = parts
        elif request.content_type == "application/json":
            entry["json"] = await request.json()
        else:
            entry["form"] = dict(await request.post())
        self.seen.append(entry)
        if self.delay:
            await asyncio.sleep(self.delay)
        return web.json_response({"ok": True, "result": True})


@pytest_asyncio.fixture(loop_scope="function")
async def api() -> AsyncIterator[tuple[BotApi, str]]:
    bot_api = BotApi()
    app = web.Application()
    app.router.add_post("/{tail:.*}", bot_api.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    yield bot_api, f"http://127.0.0.1:{port}/bot{TOKEN}"
    await runner.cleanup()


def _data(**fields: object) -> RequestData:
    return RequestData([RequestParameter.from_input(k, v) for k, v in fields.items()])


async def test_a_call_is_a_json_post_with_ptb_user_agent(api: tuple[BotApi, str]) -> None:
    bot_api, base = api
    async with AiohttpRequest() as request:
        result = await request.post(f"{base}/sendMessage",
                                    _data(chat_id=-100, text="<b>hi</b> & bye",
                                          reply_markup={"inline_keyboard": []}))
    assert result is True
    [seen] = bot_api.seen
    assert seen["path"] == f"/bot{TOKEN}/sendMessage"
    # nested objects travel as objects, as the Bot API's JSON mode takes them
    assert seen["type"] == "application/json"
    assert seen["json"] == {"chat_id": -100, "text": "<b>hi</b> & bye",
                            "reply_markup": {"inline_keyboard": []}}
    assert "python-telegram-bot" in seen["agent"]


async def test_an_upload_is_multipart(api: tuple[BotApi, str]) -> None:
    bot_api, base = api
    document = InputFile(b"week 29 report", filename="report.txt")
    async with AiohttpRequest() as request:
        await request.post(f"{base}/sendDocument", _data(chat_id=7, document=document))
    [seen] = bot_api.seen
    assert seen["type"] == "multipart/form-data"
    assert seen["parts"]["chat_id"] == (None, b"7")
    [(filename, content)] = [v for k, v in seen["parts"].items() if k != "chat_id"]
    assert (filename, content) == ("report.txt", b"week 29 report")


async def test_a_slow_answer_is_timed_out(api: tuple[BotApi, str]) -> None:
    bot_api, base = api
    bot_api.delay = 1.0
    async with AiohttpRequest(read_timeout=0.1) as request:
        with pytest.raises(TimedOut):
            await request.post(f"{base}/sendMessage", _data(chat_id=1, text="x"))
        # a per-call timeout wins over the default
        bot_api.delay = 0.3
        assert await request.post(f"{base}/sendMessage", _data(chat_id=1, text="x"),
                                  read_timeout=2.0) is True


async def test_a_refused_connection_is_a_network_error_without_the_token() -> None:
    url = f"http://127.0.0.1:{free_port()}/bot{TOKEN}/sendMessage"
    async with AiohttpRequest(connect_timeout=1.0) as request:
        with pytest.raises(NetworkError) as raised:
            await request.post(url, _data(chat_id=1, text="x"))
    assert not isinstance(raised.value, TimedOut)
    assert TOKEN not in str(raised.value) and "aiohttp." in str(raised.value)


async def test_a_request_needs_initialize_and_survives_a_restart(
    api: tuple[BotApi, str],
) -> None:
    _, base = api
    request = AiohttpRequest()
    with pytest.raises(RuntimeError):
        await request.do_request(f"{base}/getMe", "POST")
    await request.initialize()
    await request.shutdown()
    await request.shutdown()  # twice is harmless
    await request.initialize()
    assert (await request.do_request(f"{base}/getMe", "POST"))[0] == 200
    await request.shutdown()


def test_a_pool_needs_a_connection() -> None:
    with pytest.raises(ValueError):
        AiohttpRequest(connection_pool_size=0)


async def test_an_error_quoting_the_url_leaves_the_token_out() -> None:
    # aiohttp quotes the whole URL when it cannot parse it
    url = f"http://127.0.0.1:99999/bot{TOKEN}/sendMessage"
    async with AiohttpRequest() as request:
        with pytest.raises(NetworkError) as raised:
            await request.post(url, _data(chat_id=1, text="x"))
    assert TOKEN not in str(raised.value)
    assert "/<path>" in str(raised.value)


async def test_a_proxy_in_the_environment_is_used(api: tuple[BotApi, str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    bot_api, base = api
    proxy = base.split("/bot")[0]  # the fake answers as the proxy too
    url = f"http://api.telegram.invalid/bot{TOKEN}/sendMessage"
    async with AiohttpRequest(connect_timeout=2.0) as request:
        with pytest.raises(NetworkError):  # no proxy: the name does not resolve
            await request.post(url, _data(chat_id=1, text="direct"))
    monkeypatch.setenv("HTTP_PROXY", proxy)
    async with AiohttpRequest() as request:
        assert await request.post(url, _data(chat_id=1, text="proxied")) is True
    [seen] = bot_api.seen
    assert seen["json"]["text"] == "proxied"


def test_only_a_proxy_setting_counts_as_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    from adapters.base import proxies_in_environment

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert not proxies_in_environment()
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert proxies_in_environment()
