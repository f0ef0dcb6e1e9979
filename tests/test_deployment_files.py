"""The deployment files say what docs/deployment.md says: the image builds from the
hash-checked lock and ships the example snapshot; compose publishes the bot on this machine only,
Redis nowhere, and TLS only through the proxy, which keeps /metrics inside."""

from __future__ import annotations

import ipaddress
import re

from testkit import ROOT
from testkit.environment import service_variables


def _service(compose: str, name: str) -> str:
    match = re.search(rf"^  {name}:\n((?:    .*\n|\n)*)", compose, flags=re.M)
    assert match, name
    return match[1]


def test_the_image_installs_the_locked_hashes_and_ships_the_example() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "--require-hashes" in dockerfile and "-r requirements.lock" in dockerfile
    assert "--no-index" in dockerfile  # the final stage installs only the checked wheels
    assert "COPY examples/snapshot.json /usr/share/prdigest/snapshot.json" in dockerfile
    assert "PRDIGEST_SNAPSHOT=/usr/share/prdigest/snapshot.json" in dockerfile
    # The wheel is built with the hook that compiles the catalogs.
    assert re.search(r"^COPY [^\n]*hatch_build\.py", dockerfile, flags=re.M)


def test_compose_publishes_only_what_users_need() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    bot, redis, proxy = (_service(compose, n) for n in ("bot", "redis", "proxy"))
    assert re.findall(r'- "(.+)"', bot.split("ports:")[1].split("volumes:")[0]) == [
        "${PRDIGEST_BIND:-127.0.0.1}:${PRDIGEST_PORT:-8080}:8080"]
    assert "ports:" not in redis
    assert 'profiles: ["tls"]' in proxy
    caddyfile = (ROOT / "deploy" / "Caddyfile").read_text()
    assert "@metrics path /metrics" in caddyfile and "respond @metrics 404" in caddyfile
    assert "reverse_proxy bot:8080" in caddyfile


def test_compose_passes_every_secret_the_service_reads() -> None:
    """A variable missing from the bot's `environment:` never reaches the container, even
    when it is set in `.env`: a GitHub App or the narrator's key would be silently off."""
    named = service_variables() | {"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}
    environment = _service((ROOT / "docker-compose.yml").read_text(), "bot") \
        .split("environment:")[1]
    passed = set(re.findall(r"^      ([A-Z][A-Z0-9_]+):", environment, flags=re.M))
    assert named - passed == set()


def test_compose_believes_forwarded_addresses_from_its_proxy_only() -> None:
    """`*` would let any client that reaches the bot choose the address its report-page
    rate and connection limits count (a rotating `X-Forwarded-For`)."""
    compose = (ROOT / "docker-compose.yml").read_text()
    trusted = re.search(r"FORWARDED_ALLOW_IPS: \$\{FORWARDED_ALLOW_IPS:-([^}]*)\}",
                        _service(compose, "bot"))
    assert trusted and trusted[1] != "*" and "*" not in trusted[1]
    proxy_address = re.search(r"ipv4_address: ([0-9.]+)", _service(compose, "proxy"))
    subnet = re.search(r"- subnet: ([0-9./]+)", compose)
    assert proxy_address and subnet and trusted[1] == proxy_address[1]
    assert ipaddress.ip_address(proxy_address[1]) in ipaddress.ip_network(subnet[1])
