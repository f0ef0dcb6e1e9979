"""Connections that survive a failover: Sentinel-managed ones that find the new master
on every reconnect, and cluster ones whose torn-down socket is a connection error.

Sentinel: redis-py 8.1's Sentinel connections ask the Sentinels for the master only when a
pooled connection is first connected; a command retried on the same connection after
a failover (`ConnectionError`, or `ReadOnlyError` from the demoted master, which
redis-py turns into one) reconnects to the old address until its retries run out -
reproduced with a SIGKILLed master in `tests/test_redis_topologies.py`. These
subclasses resolve the master before each socket connect, so a retried write lands
on the promoted replica.

Cluster: when a master fails, redis-py's asyncio cluster client closes the connections
of the node it gave up on - those other tasks are writing on too. Such a write then
fails inside the asyncio stream with `AttributeError: 'NoneType' object has no
attribute 'writelines'` (the writer is gone; `TypeError` on some Pythons; redis-py
#3546 and #4287, fixed upstream after 8.1), which is neither a `RedisError` nor among
the errors the cluster client retries: it escaped a ledger write mid-failover
(reproduced with 48 writers and a SIGKILLed master, `tests/test_cluster_failover.py`).
`AsyncClusterConnection` reports it as the `ConnectionError` it is.

Nor does that client wait for the failover it detects: it retries a command at once,
each try refused by the dead master, and gives up within milliseconds - seconds before
a replica is promoted (`--cluster-node-timeout`, 15 s by default). `FailoverCluster`
retries such a command (and a pipeline) with a backoff until the new master answers,
for up to `failover_seconds`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio.cluster as aiocluster
import redis.asyncio.connection as aioconnection
import redis.asyncio.sentinel as aiosentinel
import redis.connection
import redis.sentinel
from redis.exceptions import ClusterDownError, ClusterError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

T = TypeVar("T")

FAILOVER_ERRORS: tuple[type[Exception], ...] = (
    RedisConnectionError, RedisTimeoutError, ClusterDownError, SlotNotCoveredError,
    TryAgainError, ClusterError)
"""What a cluster command raises while a master is replaced: the node is gone, no
master serves the slot yet (`CLUSTERDOWN`, `MASTERDOWN`), the slot is moving
(`TRYAGAIN`), or redirections ran out (`MOVED` storms end in `ClusterError`)."""
UNREACHABLE: tuple[type[Exception], ...] = (*FAILOVER_ERRORS, OSError, TimeoutError)
"""What a health check of one node may meet when the node is away."""


class FailoverConnection(redis.sentinel.SentinelManagedConnection):
    def _connect(self):  # type: ignore[no-untyped-def]
        if self.connection_pool.is_master:
            self.host, self.port = self.connection_pool.get_master_address()
        return super()._connect()  # type: ignore[no-untyped-call]


class FailoverSSLConnection(FailoverConnection, redis.connection.SSLConnection):
    pass


class AsyncFailoverConnection(aiosentinel.SentinelManagedConnection):
    async def _connect(self) -> None:
        if self.connection_pool.is_master:
            self.host, self.port = await self.connection_pool.get_master_address()
        await super()._connect()  # type: ignore[no-untyped-call]


class AsyncFailoverSSLConnection(AsyncFailoverConnection, aioconnection.SSLConnection):
    pass


class AsyncClusterConnection(aioconnection.Connection):
    """A cluster node's connection whose writer torn down mid-write (see the module's
    docstring) raises `ConnectionError`: the exact class, which the cluster client's
    retry matches by type. The command is packed before the write, so an
    `AttributeError` or `TypeError` here can only come from the closed stream."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        try:
            await super().send_packed_command(command, check_health)
        except (AttributeError, TypeError) as exc:
            await self.disconnect(nowait=True)
            raise RedisConnectionError(f"connection closed while writing: {exc}") from exc


class AsyncClusterSSLConnection(AsyncClusterConnection, aioconnection.SSLConnection):
    pass


async def through_failover(call: Callable[[], Awaitable[T]], seconds: float) -> T:
    """`call()`, tried again after each `FAILOVER_ERRORS` with a backoff (50 ms doubling
    to 1 s) until `seconds` have passed; then the last error is raised."""
    # Real time: the client rides out a real Redis failover, below any component's Clock.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    delay = 0.05
    while True:
        try:
            return await call()
        except FAILOVER_ERRORS:
            if loop.time() + delay > deadline:
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


LAYOUT_RECHECK_SECONDS = 60.0
"""How old the cluster's layout may be before a write that finds no replica to wait for
learns it again: a replica that joined since (a restarted node, the old master back
after a failover, one still syncing when the client started) is then waited for."""


class FailoverCluster(aiocluster.RedisCluster):
    """The asyncio cluster client, waiting out a master's failover (module docstring).
    A command sent to named nodes (`target_nodes`, a health check) is tried once."""

    failover_seconds = 30.0
    layout_recheck_seconds = LAYOUT_RECHECK_SECONDS
    layout_learned_at = float("-inf")

    async def initialize(self, *args: Any, **kwargs: Any) -> FailoverCluster:
        learning = self._initialize
        await super().initialize(*args, **kwargs)
        if learning and not self._initialize:
            self.layout_learned_at = asyncio.get_running_loop().time()
        return self

    def recheck_layout(self, keys: tuple[str, ...]) -> None:
        """Have the next command learn the layout again when a master of `keys` shows
        no replica and the layout is older than `layout_recheck_seconds`
        (`LAYOUT_RECHECK_SECONDS`): redis-py learns it only at start and after errors."""
        if self._initialize:
            return
        if asyncio.get_running_loop().time() - self.layout_learned_at < \
                self.layout_recheck_seconds:
            return
        if any(len(self.nodes_manager.slots_cache.get(self.keyslot(key), ())) < 2
               for key in keys):
            self._initialize = True

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        if "target_nodes" in kwargs:
            return await super().execute_command(*args, **kwargs)
        run = super().execute_command
        return await through_failover(lambda: run(*args, **kwargs), self.failover_seconds)

    async def master_states(self, timeout: float) -> dict[str, str]:
        """Each master's own word on the cluster - its `cluster_state` (`ok`, `fail`)
        or `unreachable` - by address. One node's PING would say "ok" while a third of
        the slots have no master. A master that is not ok has the next command learn
        the cluster's layout again, so the check after a failover asks the new one."""
        await self.initialize()
        masters = self.get_primaries()

        async def state(node: aiocluster.ClusterNode) -> str:
            try:
                info = await asyncio.wait_for(self.cluster_info(target_nodes=node), timeout)
            except UNREACHABLE:
                return "unreachable"
            return str(info.get("cluster_state", "unknown"))

        states = dict(zip([m.name for m in masters],
                          await asyncio.gather(*(state(m) for m in masters)), strict=True))
        if any(value != "ok" for value in states.values()):
            self._initialize = True
        return states

    def pipeline(self, transaction: Any | None = None,
                 shard_hint: Any | None = None) -> aiocluster.ClusterPipeline:
        super().pipeline(transaction, shard_hint)  # its checks of the arguments
        return FailoverPipeline(self, transaction)  # type: ignore[abstract]


class FailoverPipeline(aiocluster.ClusterPipeline):
    """A cluster pipeline sent again, after a failover error, until the new master
    answers; only the commands without a result are sent again.

    `wait_for_replica(keys, ms)` ends the pipeline with a `WAIT` on the master of each
    key's slot that has a replica, on the connection that carried the writes (a node's
    commands go out on one connection): a failover then keeps what was written. The
    masters are looked up again on every try, so a retry waits on the new one; the
    replicas' answers are in `replica_acks`, not among the results."""

    def __init__(self, client: aiocluster.RedisCluster, transaction: Any | None = None) -> None:
        super().__init__(client, transaction)
        self._wait: tuple[tuple[str, ...], int] | None = None
        self.replica_acks: list[int] = []

    async def initialize(self) -> aiocluster.ClusterPipeline:
        """Learning the layout (entering `async with`) waits out a failover too."""
        run = super().initialize
        client: Any = self.cluster_client
        return await through_failover(run, float(client.failover_seconds))

    def wait_for_replica(self, keys: tuple[str, ...], timeout_ms: int) -> None:
        self._wait = (keys, timeout_ms)

    def _queue_waits(self) -> list[Any]:
        """Queue the WAITs; the pipeline commands that carry them."""
        if self._wait is None:
            return []
        keys, timeout_ms = self._wait
        client = self.cluster_client
        masters: dict[str, Any] = {}
        for key in keys:
            serving = client.nodes_manager.slots_cache.get(client.keyslot(key), [])
            if len(serving) > 1:  # a master with a replica to wait for
                masters[serving[0].name] = serving[0]
        strategy: Any = self._execution_strategy
        waits = []
        for master in masters.values():
            self.execute_command("WAIT", 1, timeout_ms, target_nodes=master)
            waits.append(strategy._command_queue[-1])
        return waits

    async def execute(self, raise_on_error: bool = True,
                      allow_redirections: bool = True) -> list[Any]:
        strategy: Any = self._execution_strategy
        # `execute` empties the queue, even on failure, and takes each command's
        # `target_nodes` out of it: both are put back before each try. The results are
        # read from the commands themselves, so the WAITs (added on each try, as the
        # masters may have changed) never mix with them.
        queued = [(command, dict(command.kwargs)) for command in strategy._command_queue]

        async def once() -> list[Any]:
            for command, kwargs in queued:
                command.kwargs = dict(kwargs)
            strategy._command_queue = [command for command, _ in queued]
            if self._wait is not None and isinstance(self.cluster_client, FailoverCluster):
                self.cluster_client.recheck_layout(self._wait[0])
            if self.cluster_client._initialize:
                await self.cluster_client.initialize()
            waits = self._queue_waits()
            await super(FailoverPipeline, self).execute(raise_on_error, allow_redirections)
            self.replica_acks = [w.result if isinstance(w.result, int) else 0 for w in waits]
            return [command.result for command, _ in queued]

        client: Any = self.cluster_client
        return await through_failover(once, float(client.failover_seconds))


def use_cluster_connections(client: aiocluster.RedisCluster, ssl: bool) -> None:
    """Make every node of `client` - those it starts from and those it discovers
    later, which take the client's connection settings - connect with
    `AsyncClusterConnection`. redis-py's cluster constructor takes no connection
    class; called before the first command, no connection exists yet."""
    connection = AsyncClusterSSLConnection if ssl else AsyncClusterConnection
    client.connection_kwargs["connection_class"] = connection
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = connection
