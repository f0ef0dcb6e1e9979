"""The orchestrator's probes: `/livez` says the process answers, `/readyz` whether
traffic should come here. With Redis stopped a replica is taken out of the load
balancer (not ready) but never restarted (alive), and it is ready again once Redis is
back - the restart-every-pod-during-a-Redis-outage that a `/healthz` liveness probe
caused does not happen."""

from __future__ import annotations

import asyncio

import pytest

from bot.source import SnapshotSource
from bot.web.app import create_app
from testkit.reliability.killable_redis import KillableRedis
from testkit.server_support import (
    clear_env,
    example_config,
    example_snapshot,
    recording_adapters,
    services_of,
    serving,
)


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_env(monkeypatch)


@pytest.mark.redis
@pytest.mark.kills  # its Redis SIGKILLed and started again
async def test_with_redis_stopped_readiness_fails_and_liveness_holds() -> None:
    server = KillableRedis(appendonly=False).start()
    try:
        app = create_app(example_config(), redis_url=server.url,
                         source=SnapshotSource(example_snapshot()), background=False)
        async with serving(app) as http:
            assert (await http.get("/livez")).status_code == 200
            ready = await http.get("/readyz")
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"]["redis"]["ok"] is True

            server.kill()
            live = await http.get("/livez")
            ready = await http.get("/readyz")
            health = await http.get("/healthz")
            assert live.status_code == 200 and live.json()["status"] == "ok"
            assert ready.status_code == 503
            assert ready.json()["status"] == "not ready"
            assert ready.json()["checks"]["redis"] == {
                "ok": False, "configured": True, "error": "ConnectionError"}
            assert health.status_code == 503  # the people's page says so too

            server.start()
            for _ in range(100):  # the pool reconnects on its next command
                ready = await http.get("/readyz")
                if ready.status_code == 200:
                    break
                await asyncio.sleep(0.05)
            assert ready.status_code == 200, ready.text
            assert (await http.get("/livez")).status_code == 200
    finally:
        server.kill()


async def test_readiness_names_a_configured_platform_without_its_adapter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Telegram's secrets are set but no adapter was built for it: not ready, and the
    platform is named; the others are not listed at all (they are simply off)."""
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:abc")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "secret")
    adapters = {"slack": recording_adapters()["slack"]}
    app = create_app(example_config(), source=SnapshotSource(example_snapshot()),
                     background=False, adapters=adapters)
    async with serving(app) as http:
        ready = await http.get("/readyz")
        live = await http.get("/livez")
    assert live.status_code == 200
    assert ready.status_code == 503
    assert ready.json()["checks"]["platforms"] == {"slack": {"ok": True},
                                                   "telegram": {"ok": False}}
    assert "123:abc" not in ready.text


async def test_a_replica_that_is_stopping_is_not_ready_but_alive() -> None:
    """Between SIGTERM and exit the load balancer stops sending requests here (not
    ready) while the posts in flight finish (alive)."""
    app = create_app(example_config(), source=SnapshotSource(example_snapshot()),
                     background=False)
    async with serving(app) as http:
        assert (await http.get("/readyz")).status_code == 200
        services_of(app).stopping = True
        assert (await http.get("/readyz")).status_code == 503
        assert (await http.get("/readyz")).json()["checks"]["started"] == {"ok": False}
        assert (await http.get("/livez")).json() == {"status": "ok", "stopping": True}
