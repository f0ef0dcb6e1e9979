"""The one `Digests` of a command-line process (`prdigest post`, `digest`, `ask`,
`chat`), with what it holds open; the server's is wired in `bot.web.services`.

Every part of a process that gives a digest - chat, the schedule's `post`, a preview -
takes this one object, so a channel's subscribed topics, the narrator and the clock are
the same wherever its digest is asked for.
"""

from __future__ import annotations

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config
from bot.digests import Digests
from bot.narrate import Narrator, narrator_for
from bot.source import Source
from bot.store.redis.cache import Cache
from bot.store.redis.subscriptions import RedisSubscriptionStore


class ProcessDigests:
    """Builds the process's `Digests`: subscriptions and the narrator's answers in the
    Redis at `redis_url` (None: no subscriptions, answers kept in memory), the
    narrator when `[llm]` is configured and `llm` is on (`--no-llm` turns it off).
    `close()` (or `async with`) lets go of the model client and Redis."""

    def __init__(self, config: Config, source: Source, *, redis_url: str | None = None,
                 llm: bool = True, clock: Clock = SYSTEM_CLOCK) -> None:
        self.cache = (Cache.from_url(redis_url, config.cache.url_env, clock=clock) if redis_url
                      else None)
        store = self.cache if config.llm is not None and llm else None
        self.narrator: Narrator | None = narrator_for(config, store, enabled=llm, clock=clock)
        subscriptions = (RedisSubscriptionStore(self.cache.client) if self.cache is not None
                         else None)
        self.digests = Digests(config, source, subscriptions=subscriptions,
                               narrator=self.narrator, clock=clock)

    async def close(self) -> None:
        if self.narrator is not None:
            await self.narrator.close()
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> Digests:
        return self.digests

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
