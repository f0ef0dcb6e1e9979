"""The one place a Redis client is made, from the URL in `REDIS_URL`.

- `redis://` / `rediss://` (TLS) / `unix://`: one server.
- `redis+cluster://host:port[,host:port...]` (`rediss+cluster://` for TLS): a Redis
  Cluster, discovered from whichever listed node answers.
- `redis+sentinel://host:26379[,host:port...]/mymaster[/db]` (`rediss+sentinel://`):
  the current master of `mymaster` as the Sentinels name it, found again after a
  failover.

Credentials in the URL are the data nodes' (`user:password@`); Sentinels that want a
password of their own take `?sentinel_password=`. The query string carries redis-py's
connection options (`ssl_ca_certs`, `ssl_certfile`, `ssl_keyfile`, `ssl_cert_reqs`,
`ssl_check_hostname`, `socket_timeout`, ...); an unknown option is an error, so a typo
(`?cluster=true`) is never silently ignored.

Every client - sync and asyncio alike - is typed as a plain `redis.Redis` /
`redis.asyncio.Redis`: the cluster clients answer the same commands prdigest uses
(single-key commands, `EVAL` with keys of one hash tag, pipelines, `MGET` of one tag),
which is what `bot.store.keys` guarantees.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import parse_qsl, unquote, urlsplit

import redis
import redis.asyncio as aioredis
import redis.asyncio.cluster as aiocluster
import redis.asyncio.sentinel as aiosentinel
import redis.cluster
import redis.sentinel
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialWithJitterBackoff
from redis.connection import URL_QUERY_ARGUMENT_PARSERS
from redis.exceptions import RedisClusterException
from redis.retry import Retry

from bot.errors import ConfigError
from bot.store.coordination import StoreUnavailable
from bot.store.redis.failover import (
    AsyncFailoverConnection,
    AsyncFailoverSSLConnection,
    FailoverCluster,
    FailoverConnection,
    FailoverPipeline,
    FailoverSSLConnection,
    use_cluster_connections,
)

Mode = Literal["single", "cluster", "sentinel"]

REDIS_ERRORS: tuple[type[Exception], ...] = (redis.RedisError, RedisClusterException, OSError,
                                              TimeoutError)
"""What a Redis call may raise when Redis (any topology) is away or misconfigured;
`RedisClusterException` (slot not covered, ...) is not a `RedisError` in redis-py."""

@contextlib.contextmanager
def unavailable_as_store_error() -> Iterator[None]:
    """Redis away, refusing or failing over (`REDIS_ERRORS`) as the stores' own
    `StoreUnavailable`, naming what the client raised."""
    try:
        yield
    except REDIS_ERRORS as exc:
        raise StoreUnavailable(type(exc).__name__, str(exc)) from exc


FAILOVER_SECONDS = 30.0
"""How long a command keeps retrying while a Sentinel promotes a new master (or a
cluster moves a slot): about Sentinel's default `down-after-milliseconds` plus the
election. `?failover_seconds=` changes it."""

MAX_FAILOVER_SECONDS = 40.0
"""The longest `?failover_seconds=`: a slot's lock (`bot.store.ledger.POST_LOCK_SECONDS`,
60 s, renewed every 20 s) must outlive a failover the clients wait out."""

CLUSTER_RETRIES = 2
"""Immediate retries of the asyncio cluster client per round (`FailoverCluster` spaces
the rounds out over `failover_seconds`): more only storm a dead node."""

WAIT_REPLICAS_MS = 200
"""How long a ledger write waits for one replica to have it (Sentinel only), so a
failover right after does not lose what was just recorded."""

_OPTIONS = set(URL_QUERY_ARGUMENT_PARSERS) | {
    "ssl_cert_reqs", "ssl_ca_certs", "ssl_ca_path", "ssl_ca_data", "ssl_certfile",
    "ssl_keyfile", "ssl_password", "ssl_ciphers", "client_name",
}
_PRDIGEST_OPTIONS = {"failover_seconds", "sentinel_password", "sentinel_username"}
_SCHEMES: dict[str, tuple[Mode, bool]] = {
    "redis": ("single", False), "rediss": ("single", True), "unix": ("single", False),
    "redis+cluster": ("cluster", False), "rediss+cluster": ("cluster", True),
    "redis+sentinel": ("sentinel", False), "rediss+sentinel": ("sentinel", True),
}


@dataclass(frozen=True)
class RedisTarget:
    """A parsed `REDIS_URL`: which topology, which nodes, which options."""

    mode: Mode
    url: str
    nodes: tuple[tuple[str, int], ...] = ()
    service: str = ""
    db: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    sentinel_options: dict[str, Any] = field(default_factory=dict)
    failover_seconds: float = FAILOVER_SECONDS

    def retries(self) -> int:
        """Retries on connection errors spanning `failover_seconds` (the backoff is
        capped at one second); `ReadOnlyError` from a demoted master is a connection
        error to a Sentinel-managed client, so a retried write lands on the new master."""
        return max(3, int(self.failover_seconds) + 3)

    def retry(self) -> Retry:
        return Retry(ExponentialWithJitterBackoff(cap=1.0, base=0.05), self.retries())

    def async_retry(self) -> AsyncRetry:
        """The same for asyncio clients, which need redis-py's asyncio `Retry`."""
        return AsyncRetry(ExponentialWithJitterBackoff(cap=1.0, base=0.05), self.retries())


def parse(url: str, variable: str = "REDIS_URL") -> RedisTarget:
    """The target `url` names; a `ConfigError` naming `variable` when it names none."""
    def bad(reason: str) -> ConfigError:
        return ConfigError(f"{variable}: {reason}")

    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() not in _SCHEMES:
        names = ", ".join(f"{s}://" for s in _SCHEMES)
        raise bad(f"not a Redis URL (expected one of {names})")
    mode, tls = _SCHEMES[scheme.lower()]
    if scheme.lower() == "unix":
        return RedisTarget(mode="single", url=url)
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    if not hosts:
        raise bad("no host in the URL")
    options: dict[str, Any] = {}
    prdigest: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in _PRDIGEST_OPTIONS:
            prdigest[name] = value
            continue
        if name not in _OPTIONS:
            raise bad(f"unknown option {name!r} in the URL"
                      + (" (use redis+cluster://host:port)" if name == "cluster" else ""))
        parser = cast("Callable[[str], Any] | None", URL_QUERY_ARGUMENT_PARSERS.get(name))
        try:
            options[name] = parser(value) if parser is not None else value
        except (TypeError, ValueError):
            raise bad(f"option {name}: not a valid value: {value!r}") from None
    if userinfo:
        user, _, password = userinfo.partition(":")
        if user:
            options["username"] = unquote(user)
        if password:
            options["password"] = unquote(password)
    if tls:
        options["ssl"] = True
    nodes = tuple(_node(text, bad, 26379 if mode == "sentinel" else 6379)
                  for text in hosts.split(","))
    if mode == "single" and len(nodes) > 1:
        raise bad("several hosts need redis+cluster:// or redis+sentinel://")
    path = [unquote(p) for p in parts.path.split("/") if p]
    service, db = "", int(options.pop("db", 0))
    if mode == "sentinel":
        if not path:
            raise bad("name the Sentinel service: redis+sentinel://host:26379/mymaster/0")
        service, path = path[0], path[1:]
    if len(path) > 1:
        raise bad(f"unexpected path {parts.path!r}")
    if path:
        if not path[0].isdigit():
            raise bad(f"the database must be a number, not {path[0]!r}")
        db = int(path[0])
    if mode == "cluster" and db != 0:
        raise bad("a Redis Cluster has only database 0")
    try:
        failover = float(prdigest.get("failover_seconds", FAILOVER_SECONDS))
    except ValueError:
        raise bad("failover_seconds: not a number") from None
    if not 0 <= failover <= MAX_FAILOVER_SECONDS:
        raise bad(f"failover_seconds: from 0 to {MAX_FAILOVER_SECONDS:.0f} (a post's lock "
                  "must outlive the wait)")
    sentinel_options = {k.removeprefix("sentinel_"): v for k, v in prdigest.items()
                        if k.startswith("sentinel_")}
    sentinel_options.update({k: v for k, v in options.items() if k.startswith("socket_")})
    return RedisTarget(mode=mode, url=url, nodes=nodes, service=service, db=db,
                       options=options, sentinel_options=sentinel_options,
                       failover_seconds=failover)


def _node(text: str, bad: Any, default_port: int) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = text, str(default_port)
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise bad(f"not host:port: {text!r}")
    return unquote(host), int(port)


log = logging.getLogger(__name__)

# Clients whose writes should wait for a replica (`write_replicated`).
_REPLICATED: weakref.WeakSet[Any] = weakref.WeakSet()


def sync_client(url: str, variable: str = "REDIS_URL", **extra: Any) -> redis.Redis:
    """A synchronous client for `url` (the cache, subscriptions, the CLI)."""
    target = parse(url, variable)
    if target.mode == "single":  # validated above; redis-py's own reading of the URL
        return redis.Redis.from_url(url, **extra)
    kwargs = {**target.options, **extra, "retry": target.retry()}
    if target.mode == "cluster":
        nodes = [redis.cluster.ClusterNode(host, port)  # type: ignore[no-untyped-call]
                 for host, port in target.nodes]
        return cast(redis.Redis, _LazyCluster(lambda: redis.cluster.RedisCluster(
            startup_nodes=nodes, **kwargs)))
    sentinel = redis.sentinel.Sentinel(  # type: ignore[no-untyped-call]
        list(target.nodes), sentinel_kwargs=target.sentinel_options)
    connection = FailoverSSLConnection if target.options.get("ssl") else FailoverConnection
    client = cast(redis.Redis, sentinel.master_for(  # type: ignore[no-untyped-call]
        target.service, db=target.db, connection_class=connection, **kwargs))
    _REPLICATED.add(client)
    return client


class _LazyCluster:
    """A sync `RedisCluster` made at its first use: redis-py's connects to the nodes in
    its constructor, and a service must start (degraded) while the cluster is away.
    Until one is made, each use tries again and raises what Redis raised."""

    def __init__(self, make: Callable[[], redis.cluster.RedisCluster]) -> None:
        self._make = make
        self._client: redis.cluster.RedisCluster | None = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._make()
        return getattr(self._client, name)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def async_client(url: str, variable: str = "REDIS_URL", **extra: Any) -> aioredis.Redis:
    """An asyncio client for `url` (the scheduler, claims, the ledger)."""
    target = parse(url, variable)
    if target.mode == "single":
        return aioredis.Redis.from_url(url, **extra)
    kwargs = {**target.options, **extra, "retry": target.async_retry()}
    if target.mode == "cluster":
        nodes = [aiocluster.ClusterNode(host, port) for host, port in target.nodes]
        # The cluster client retries at once, each try relearning the layout: a few
        # are enough, `FailoverCluster` waits between rounds of them.
        kwargs["retry"] = AsyncRetry(ExponentialWithJitterBackoff(cap=1.0, base=0.05),
                                     CLUSTER_RETRIES)
        cluster = FailoverCluster(startup_nodes=nodes, **kwargs)
        cluster.failover_seconds = target.failover_seconds
        use_cluster_connections(cluster, bool(target.options.get("ssl")))
        return cast(aioredis.Redis, cluster)
    sentinel = aiosentinel.Sentinel(  # type: ignore[no-untyped-call]
        list(target.nodes), sentinel_kwargs=target.sentinel_options)
    connection = (AsyncFailoverSSLConnection if target.options.get("ssl")
                  else AsyncFailoverConnection)
    client = sentinel.master_for(target.service, db=target.db, connection_class=connection,
                                 **kwargs)
    _REPLICATED.add(client)
    return cast(aioredis.Redis, client)


async def write_replicated(client: aioredis.Redis, commands: Callable[[Any], None],
                           keys: Sequence[str]) -> list[Any]:
    """Run `commands(pipe)` - writes to `keys` - and, on a Sentinel-managed master or a
    cluster master with replicas, wait (briefly) until a replica has them, so a
    failover keeps them. The results of `commands`, in order.

    WAIT counts only the writes of the connection it is sent on, and a pool hands each
    command any connection: the writes and their WAIT go out together in one pipeline,
    on one connection (on a cluster, one WAIT per master the keys live on). A replica
    that has not caught up within WAIT_REPLICAS_MS is logged, not fatal: a master
    without replicas still posts.
    """
    replicated = client in _REPLICATED
    async with client.pipeline(transaction=False) as pipe:
        commands(pipe)
        if isinstance(pipe, FailoverPipeline):
            pipe.wait_for_replica(tuple(keys), WAIT_REPLICAS_MS)
        elif replicated:
            pipe.wait(1, WAIT_REPLICAS_MS)
        results = list(await pipe.execute())
    acks = (pipe.replica_acks if isinstance(pipe, FailoverPipeline)
            else [results.pop()] if replicated else [])
    if not all(acks):
        log.warning("redis: no replica confirmed a write within %d ms; a failover now "
                    "could lose it", WAIT_REPLICAS_MS)
    return results


async def cluster_masters(client: aioredis.Redis, timeout: float) -> dict[str, str] | None:
    """On a Redis Cluster, each master's `cluster_state` (or `unreachable`) by address;
    None for one server or a Sentinel-managed master."""
    if isinstance(client, FailoverCluster):
        return await client.master_states(timeout)
    return None


SCRIPT_PROBE = "return 1"


async def scripting_problem(client: aioredis.Redis) -> str | None:
    """Why the locks cannot work here (no `EVAL` permission, scripting disabled), or
    None when a trivial script runs. Connection trouble is not this probe's business."""
    try:
        await client.eval(SCRIPT_PROBE, 0)
    except redis.exceptions.NoPermissionError as exc:
        return f"the Redis user may not run scripts (EVAL): {exc}"
    except redis.exceptions.ResponseError as exc:
        return f"Redis refused a script (EVAL): {exc}"
    except REDIS_ERRORS:
        return None
    return None
