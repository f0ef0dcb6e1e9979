"""Telegram posts whose answer is late or never comes: a fake Bot API that posts each
message and then holds its answer back, for some sends a little (Telegram slow), for a
few long (a stall). Weekly posts to `--channels` Telegram groups go through the real
scheduler and adapter (private redis-server), then a second pass an hour later, under
three settings: PTB's own 5 s read timeout with the old behaviour (a timed-out send
retried), prdigest's 30 s send timeout with `in_doubt = "resend"`, and with
`in_doubt = "hold"` (the default). Times are scaled down by `--scale` (10: 5 s is
0.5 s) so a run takes seconds. Prints per setting: channels with their digest once,
twice, not at all, and held for an operator.

    python -m bench.telegram_doubt [--channels 200] [--slow 0.2] [--stalled 0.02] [--scale 10]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
from collections import Counter
from datetime import timedelta

from adapters.poster import AdapterPoster
from adapters.sending import Limits
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.settings import TelegramSecrets, TelegramSettings
from bot.clock import HeldClock
from bot.store.claims import Claims
from testkit.fakes.telegram import FakeTelegram
from testkit.redis_server import private_redis
from testkit.redis_topologies import flush
from testkit.schedule import (
    SHANGHAI_MONDAY_9,
    CountingSource,
    channel,
    make_config,
    redis_port,
    scheduler,
)
from testkit.server_support import example_snapshot

SLOW_ANSWER = 8.0
"""Seconds a slow answer takes (before scaling): beyond PTB's 5 s, within 30 s."""
STALLED_ANSWER = 45.0
"""Seconds a stalled answer takes (before scaling): beyond the 30 s send timeout."""


async def run(url: str, channels: int, timeout: float, in_doubt: str, stalls: list[float],
              scale: float) -> Counter[str]:
    """Two passes of the schedule; how each channel ended."""
    flush(url)
    ids = [f"-100{7000 + n}" for n in range(channels)]
    config = make_config([channel("telegram", chat, lang="en") for chat in ids])
    with FakeTelegram() as tg:
        for seconds in stalls:
            tg.stall_after_accepting("sendMessage", seconds / scale)
        clock = HeldClock(SHANGHAI_MONDAY_9 + timedelta(minutes=1))  # the date held
        async with redis_port(url) as port:
            adapter = TelegramAdapter(config, None,  # type: ignore[arg-type]
                                      Claims(port, clock=clock),
                                      TelegramSecrets(tg.token, "s"),
                                      TelegramSettings(api_url=tg.base_url,
                                                       send_timeout_seconds=timeout / scale,
                                                       in_doubt=in_doubt),
                                      limits=Limits(attempts=1, max_wait=60.0,
                                                    longest_hold=60.0))
            try:
                schedule = scheduler(config, CountingSource(example_snapshot()), port,
                                     AdapterPoster({"telegram": adapter}), clock,
                                     concurrency=64)
                await schedule.tick()
                clock.advance(timedelta(hours=1))
                await asyncio.sleep(max(stalls, default=0) / scale)  # the stalls end
                await schedule.tick()
                held = schedule.stats.held
            finally:
                await adapter.close()
        arrived = Counter(m["chat_id"] for m in tg.sent())
    ended = Counter({"once": sum(arrived[c] == 1 for c in ids),
                     "twice or more": sum(arrived[c] > 1 for c in ids),
                     "not at all": sum(arrived[c] == 0 for c in ids)})
    ended["held"] = held
    return ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=200)
    parser.add_argument("--slow", type=float, default=0.2,
                        help="share of sends answered after 8 s")
    parser.add_argument("--stalled", type=float, default=0.02,
                        help="share of sends answered after 45 s")
    parser.add_argument("--scale", type=float, default=10.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the held and failed posts' lines: the table
    chooser = random.Random(29)
    stalls = [STALLED_ANSWER if r < args.stalled else SLOW_ANSWER
              if r < args.stalled + args.slow else 0.0
              for r in (chooser.random() for _ in range(args.channels))]
    print(f"{args.channels} weekly posts to Telegram groups; the fake posts every message, "
          f"then answers {stalls.count(SLOW_ANSWER)} after {SLOW_ANSWER:g} s and "
          f"{stalls.count(STALLED_ANSWER)} after {STALLED_ANSWER:g} s (times / "
          f"{args.scale:g} in this run); a second pass an hour later.")
    print(f"{'setting':<46} {'once':>5} {'twice+':>7} {'never':>6} {'held':>5}")
    settings = (("PTB's 5 s read timeout, retried (before)", 5.0, "resend"),
                ("30 s send timeout, in_doubt = resend", 30.0, "resend"),
                ("30 s send timeout, in_doubt = hold (default)", 30.0, "hold"))
    with private_redis() as url:
        for name, timeout, policy in settings:
            ended = asyncio.run(run(url, args.channels, timeout, policy, stalls, args.scale))
            print(f"{name:<46} {ended['once']:>5} {ended['twice or more']:>7} "
                  f"{ended['not at all']:>6} {ended['held']:>5}")


if __name__ == "__main__":
    main()
