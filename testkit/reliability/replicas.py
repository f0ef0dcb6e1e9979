"""Several `prdigest serve` replicas on one Redis, each behind proxies of its own.

Every replica runs through `serve_runner` (slot locks and alive marks of 5 s) with a
config file of its own that differs from the others' only in where GitHub, Slack,
Telegram and Feishu are: a `HoldingProxy` per replica and service, in front of the one
fake each service has. So a test knows which replica sent a request, can park the next
request of a kind on one replica (`Replica.park`) or wherever it goes first
(`Replicas.park_first`), and SIGKILL exactly the replicas holding one.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bot.models import PullRequest
from testkit.reliability.holding_proxy import Hold, HoldingProxy
from testkit.reliability.names import SECRETS
from testkit.reliability.serve_process import ServeProcess
from testkit.reliability.world import Urls, World
from testkit.server_support import merged_event, webhook_request

SERVICES = ("github", "slack", "telegram", "feishu")
# The request that carries a message, by platform (Feishu's replies share the prefix).
POST_PATHS = {"slack": "chat.postMessage", "telegram": "sendMessage",
              "feishu": "/open-apis/im/v1/messages"}


@dataclass(frozen=True)
class Delivery:
    """One GitHub webhook delivery of a merge, kept so it can be redelivered as is."""

    number: int
    body: bytes
    headers: dict[str, str]


def merge_delivery(pull: PullRequest, repo: str) -> Delivery:
    """The signed `pull_request` closed+merged delivery GitHub sends for `pull`."""
    body, headers = webhook_request(merged_event(pull, repo), delivery=uuid.uuid4().hex,
                                    secret=SECRETS["GITHUB_WEBHOOK_SECRET"])
    return Delivery(pull.number, body, headers)


@dataclass
class Replica:
    """One `prdigest serve` (started again as a new process on a new port after a
    kill) and the proxies its config file points it at."""

    index: int
    config: Path
    env: Mapping[str, str]
    log: Path
    proxies: dict[str, HoldingProxy]
    process: ServeProcess | None = None
    kills: int = 0

    def start(self) -> Replica:
        self.process = ServeProcess(self.config, self.env, self.log, runner=True).start()
        return self

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.process is not None and \
            self.process.process.poll() is None

    @property
    def url(self) -> str:
        assert self.process is not None
        return self.process.url

    def kill(self) -> None:
        """SIGKILL, then let go of what its proxies parked (dropped, as the broken
        connection would drop it)."""
        if self.process is not None:
            self.process.kill()
            self.kills += 1
        for proxy in self.proxies.values():
            proxy.release()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()

    def park(self, service: str, path_part: str, when: str = "before") -> Hold:
        """Park this replica's next request to `service` whose path has `path_part`."""
        return self.proxies[service].hold(path_part, when)

    def deliver(self, delivery: Delivery, timeout: float = 30.0) -> int | None:
        """Send the delivery; its status, or None when the replica could not answer
        (dead, or killed while handling it) - GitHub then redelivers it."""
        try:
            answer = httpx.post(f"{self.url}/github/webhook", content=delivery.body,
                                headers=delivery.headers, timeout=timeout)
        except httpx.TransportError:
            return None
        return answer.status_code


@dataclass
class Parked:
    """The first request of a kind, parked on whichever replica sent it."""

    service: str
    holds: dict[int, Hold] = field(default_factory=dict)

    def holders(self) -> list[int]:
        """The replicas holding a parked request of this kind."""
        return [index for index, hold in self.holds.items() if hold.parked.is_set()]

    def disarm_others(self) -> None:
        """Once one replica is parked, the others' holds no longer park anything."""
        for hold in self.holds.values():
            if hold.taken == 0:
                hold.count = 0


class Replicas:
    """`count` replicas of one config (`config_for(urls)` with each one's proxy URLs),
    started together, each logging to `serve-<index>.log` in `workdir`."""

    def __init__(self, stack: contextlib.ExitStack, fakes: World, redis_url: str,
                 workdir: Path, count: int, config_for: Callable[[Urls], str]) -> None:
        self.fakes = fakes
        self.replicas: list[Replica] = []
        upstream = fakes.urls()
        for index in range(count):
            proxies = {name: stack.enter_context(HoldingProxy(getattr(upstream, name)))
                       for name in SERVICES}
            urls = Urls(**{name: proxies[name].base_url for name in SERVICES})
            config = workdir / f"prdigest-{index}.toml"
            config.write_text(config_for(urls), encoding="utf-8")
            self.replicas.append(Replica(index, config, fakes.env(redis_url),
                                         workdir / f"serve-{index}.log", proxies))
        stack.callback(self.stop)

    def __getitem__(self, index: int) -> Replica:
        return self.replicas[index]

    def __iter__(self) -> Iterator[Replica]:
        return iter(self.replicas)

    def start(self, replicas: Sequence[Replica] | None = None) -> None:
        """Start the given replicas (all by default) at once."""
        chosen = list(self.replicas if replicas is None else replicas)
        if not chosen:  # every replica asked for is already up
            return
        with ThreadPoolExecutor(len(chosen)) as pool:
            list(pool.map(Replica.start, chosen))

    def stop(self) -> None:
        for replica in self.replicas:
            replica.stop()

    def alive(self) -> list[Replica]:
        return [replica for replica in self.replicas if replica.alive]

    def park_first(self, platform: str, when: str = "before") -> Parked:
        """Park the next message posted to `platform`, whichever replica posts it."""
        parked = Parked(platform)
        for replica in self.replicas:
            parked.holds[replica.index] = replica.park(platform, POST_PATHS[platform], when)
        return parked

    def wait_parked(self, parks: Sequence[Parked], timeout: float) -> list[int]:
        """Wait until each kind has parked a request (disarming the other replicas'
        holds of that kind as it does); the replicas holding one, in order."""
        deadline = time.monotonic() + timeout
        waiting = list(parks)
        while waiting:
            for park in list(waiting):
                if park.holders():
                    park.disarm_others()
                    waiting.remove(park)
            if waiting and time.monotonic() > deadline:
                raise RuntimeError(f"nothing parked for {[p.service for p in waiting]}: "
                                   f"{self.log_tail()}")
            time.sleep(0.02)
        return sorted({index for park in parks for index in park.holders()})

    def logs(self) -> str:
        return "".join(r.log.read_text(errors="replace") for r in self.replicas
                       if r.log.exists())

    def log_tail(self, size: int = 3000) -> str:
        return self.logs()[-size:]
