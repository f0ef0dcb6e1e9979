"""Redis: the one place prdigest speaks it.

`client` makes the clients (`REDIS_URL`: one server, a Cluster, a Sentinel set) and
`failover` keeps them through a failover; `coordination` is the coordination port on
Redis (`bot.store.coordination`, asyncio client only), `safety` its check of the
eviction policy and persistence; `cache`, `subscriptions`, `chat_settings`,
`review_queues` and `weeks_index` are the stores the read-through cache and chat keep
in the same Redis (synchronous client: they are called from worker threads).
"""
