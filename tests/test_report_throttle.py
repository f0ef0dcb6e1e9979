"""Report pages are open to anyone: visitors asking for one report at once share a
single build, and a client asking for more pages a minute than
`server.report_requests_per_minute` gets a friendly 429 with `Retry-After`."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter

import httpx
import msgspec
import pytest
from starlette.applications import Starlette

from bot.config import Config
from bot.source import SnapshotSource, WeekData
from bot.web.app import create_app
from bot.web.throttle import Allowance, ClientRate
from testkit.clock import VirtualClock
from testkit.server_support import clear_env, clock, example_config, example_snapshot, serving

PAGE = "/reports/acme/lumen/2026-W29?lang=en"


class SlowCountingSource(SnapshotSource):
    """The example snapshot, slow enough for requests to overlap; counts week reads."""

    def __init__(self) -> None:
        super().__init__(example_snapshot())
        self.weeks: Counter[str] = Counter()
        self._lock = threading.Lock()

    def fetch_week(self, repo: str, week: str) -> WeekData:
        with self._lock:
            self.weeks[week] += 1
        time.sleep(1.0)  # long enough for every request of a burst to arrive on a loaded machine
        return super().fetch_week(repo, week)


def app_with(config: Config, source: SnapshotSource) -> Starlette:
    return create_app(config, source=source, clock=clock(), background=False, adapters={})


def limited(per_minute: int) -> Config:
    config = example_config()
    server = msgspec.structs.replace(config.server, report_requests_per_minute=per_minute)
    return msgspec.structs.replace(config, server=server)


async def test_concurrent_visitors_of_one_report_share_one_build(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)  # no Redis: without sharing, every request would build
    source = SlowCountingSource()
    app = app_with(limited(1000), source)
    async with serving(app) as http:
        answers = await asyncio.gather(*(http.get(PAGE) for _ in range(8)))
        assert [a.status_code for a in answers] == [200] * 8
        assert len({a.text for a in answers}) == 1
        assert source.weeks["2026-W29"] == 1
        again = await http.get(PAGE)  # sharing is for builds in flight, not a cache
    assert again.status_code == 200
    assert source.weeks["2026-W29"] == 2


async def test_a_burst_beyond_the_limit_gets_429_with_retry_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)
    app = app_with(limited(5), SnapshotSource(example_snapshot()))
    async with serving(app) as http:
        allowed = [await http.get(path) for path in
                   ["/reports/acme/lumen", PAGE, "/reports/no/such", PAGE, "/reports/acme/lumen"]]
        refused = await http.get(PAGE)
        chinese = await http.get("/reports/acme/lumen?lang=zh")
    assert [a.status_code for a in allowed] == [200, 200, 404, 200, 200]
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 12
    assert "Too many requests" in refused.text and "Traceback" not in refused.text
    assert refused.headers["Cache-Control"] == "no-store"
    assert chinese.status_code == 429 and "请求过多" in chinese.text


async def test_the_limit_is_per_client(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)
    app = app_with(limited(2), SnapshotSource(example_snapshot()))
    codes = {}
    async with app.router.lifespan_context(app):
        for address in ("10.0.0.1", "10.0.0.2"):
            transport = httpx.ASGITransport(app=app, client=(address, 40000))
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                codes[address] = [(await http.get("/reports/acme/lumen")).status_code
                                  for _ in range(3)]
    assert codes == {"10.0.0.1": [200, 200, 429], "10.0.0.2": [200, 200, 429]}


def test_a_bucket_refills_at_the_configured_rate() -> None:
    clock = VirtualClock()
    rate = ClientRate(6, clock=clock)  # one request per 10 s, six at once
    assert [rate.wait_seconds("a") for _ in range(6)] == [0] * 6
    assert rate.wait_seconds("a") == 10
    clock.advance(9.0)
    assert rate.wait_seconds("a") == 1
    clock.advance(1.5)
    assert rate.wait_seconds("a") == 0
    clock.advance(989.5)  # long idle: forgotten, and full again
    assert [rate.wait_seconds("a") for _ in range(7)] == [0] * 6 + [10]


def test_the_shared_allowance_refills_by_the_hour_and_lets_a_large_cost_through_when_full(
) -> None:
    clock = VirtualClock()
    allowance = Allowance(60, clock=clock)
    assert allowance.take(40) == 0
    assert allowance.take(30) == 10 * 60  # 30 needed, 20 left: 10 more at one a minute
    clock.advance(10 * 60)
    assert allowance.take(30) == 0
    clock.advance(3600)
    assert allowance.take(500) == 0  # larger than the bucket: only when it is full
    assert allowance.take(1) > 0
    assert Allowance(0, clock=clock).take(1) == 3600
