"""`prdigest serve`, with the scheduler's timings shortened, for kill tests.

    python -m testkit.reliability.serve_runner --config F --port P
        [--lock-seconds 5] [--poll-seconds 1] [--alive-seconds 5]

It builds exactly what `prdigest serve` builds (`create_app` from the config file and
the environment) and runs it under uvicorn; only the slot lock's expiry, the pass
interval and the life of the process's alive mark are shortened, so a run killed while
holding a slot or an unanswered delivery is taken over in seconds. SIGKILL it like any process.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

import uvicorn

from bot.config import load_config
from bot.delivery.schedule import ScheduleSettings
from bot.web.app import create_app
from bot.web.services import Services

LOCK_SECONDS = 5.0
ALIVE_SECONDS = 5.0
"""Slot locks and alive marks are renewed every third of their life: 5 s keeps them
held through a loaded machine's pauses of a few seconds, yet lets a killed process's
lapse within seconds."""
ALIVE_WAIT = ALIVE_SECONDS + 0.5
"""Seconds after a kill by which the dead process's alive mark has lapsed."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--lock-seconds", type=float, default=LOCK_SECONDS)
    parser.add_argument("--poll-seconds", type=float, default=1.0)
    parser.add_argument("--alive-seconds", type=float, default=ALIVE_SECONDS)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    schedule = ScheduleSettings(lock_seconds=args.lock_seconds,
                                build_lock_seconds=args.lock_seconds,
                                poll_seconds=args.poll_seconds)
    app = create_app(load_config(args.config), redis_url=os.environ.get("REDIS_URL"),
                     config_file=args.config, schedule=schedule)
    services: Services = app.state.services
    services.process.claims.alive_seconds = args.alive_seconds
    if services.process.flusher is not None:
        services.process.flusher.interval_seconds = args.poll_seconds
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level=args.log_level,
                lifespan="on")


if __name__ == "__main__":
    main()
