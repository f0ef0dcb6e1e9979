"""Redis: the one place prdigest speaks it.

`client` makes the clients (`REDIS_URL`: one server, a Cluster, a Sentinel set) and
`failover` keeps them through a failover; `coordination` is the coordination port on
Redis (`bot.store.coordination`, asyncio client only); `cache`, `subscriptions` and
`weeks_index` are the stores the read-through cache and chat's subscriptions keep in
the same Redis (synchronous client: they are called from worker threads).
"""
