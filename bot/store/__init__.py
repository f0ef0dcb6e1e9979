"""Redis: every key, one-time claims, locks, the delivery ledger, the cache, subscriptions."""
