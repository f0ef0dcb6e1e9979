"""Sentinel-managed connections that find the new master on every reconnect.

redis-py 8.1's Sentinel connections ask the Sentinels for the master only when a
pooled connection is first connected; a command retried on the same connection after
a failover (`ConnectionError`, or `ReadOnlyError` from the demoted master, which
redis-py turns into one) reconnects to the old address until its retries run out -
reproduced with a SIGKILLed master in `tests/test_redis_topologies.py`. These
subclasses resolve the master before each socket connect, so a retried write lands
on the promoted replica.
"""

from __future__ import annotations

import redis.asyncio.connection as aioconnection
import redis.asyncio.sentinel as aiosentinel
import redis.connection
import redis.sentinel


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
