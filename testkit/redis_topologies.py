"""A real local Redis Cluster (3 masters) and a Sentinel set (master, replica, one
Sentinel), on free loopback ports, for the tests and benchmarks that must hold on the
topologies teams run - not only on one server.

Both come from Debian's `redis` packages: `redis-server` (a Sentinel is
`redis-server FILE --sentinel` when `redis-sentinel` is not installed) and `redis-cli`
(`--cluster create`).
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from testkit.processes import dies_with_parent, kill_process, stop_all
from testkit.redis_server import free_port

SENTINEL_SERVICE = "mymaster"
DOWN_AFTER_MS = 500
"""How soon the test Sentinel declares a silent master down (production: ~30 s)."""


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed; run scripts/system-deps.sh")
    return found


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_port(rng: random.Random | None = None) -> int:
    """A free port whose cluster bus port (+10000) is free too; Redis refuses cluster
    ports above 55535."""
    rng = rng or random.Random()
    while True:
        port = rng.randrange(20000, 55535)
        if _bindable(port) and _bindable(port + 10000):
            return port


class WaitedTooLong(RuntimeError):
    """What was waited for did not happen within the limit (a failover still going on)."""


def _wait(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll `check` until it holds; the limit is generous (a loaded machine is slow) and
    costs nothing when it holds early; `WaitedTooLong` past it."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except (redis.RedisError, OSError):
            pass
        if time.monotonic() > deadline:
            raise WaitedTooLong(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.05)


class ServerExited(RuntimeError):
    """A server stopped before it answered: its port is taken."""


@dataclass
class _Processes:
    """Server processes started here, stopped (and their files removed) at the end."""

    workdir: Path
    procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    def server(self, port: int, *args: str) -> None:
        """Start a redis-server on `port`; `ServerExited` when it stops at once (the
        port was taken between the check and the bind)."""
        command = [_binary("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                   "--save", "", "--appendonly", "no", "--dir", str(self.workdir), *args]
        proc = self.procs[port] = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.DEVNULL,
                                                   preexec_fn=dies_with_parent())
        client = redis.Redis(port=port, socket_connect_timeout=0.5)

        def answering() -> bool:
            if proc.poll() is not None:
                del self.procs[port]
                raise ServerExited(f"redis-server on port {port} exited ({proc.returncode})")
            return bool(client.ping())

        try:
            _wait(answering, f"redis-server on port {port} answering")
        finally:
            client.close()

    def sentinel(self, port: int, master_port: int) -> None:
        conf = self.workdir / f"sentinel-{port}.conf"
        conf.write_text("\n".join([
            f"port {port}", "bind 127.0.0.1", f"dir {self.workdir}",
            f"sentinel monitor {SENTINEL_SERVICE} 127.0.0.1 {master_port} 1",
            f"sentinel down-after-milliseconds {SENTINEL_SERVICE} {DOWN_AFTER_MS}",
            f"sentinel failover-timeout {SENTINEL_SERVICE} 5000",
            f"sentinel parallel-syncs {SENTINEL_SERVICE} 1", ""]), encoding="utf-8")
        binary = shutil.which("redis-sentinel")
        command = [binary, str(conf)] if binary else [_binary("redis-server"), str(conf),
                                                      "--sentinel"]
        self.procs[port] = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL,
                                            preexec_fn=dies_with_parent())
        client = redis.Redis(port=port, socket_connect_timeout=0.5)
        _wait(lambda: bool(client.sentinel_masters()), f"sentinel on port {port} monitoring")
        client.close()

    def kill(self, port: int) -> None:
        """SIGKILL: no shutdown, no last words to the replicas."""
        kill_process(self.procs[port])

    def stop(self) -> None:
        try:
            stop_all(list(self.procs.values()))
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)


@contextmanager
def _processes(prefix: str) -> Iterator[_Processes]:
    started = _Processes(Path(tempfile.mkdtemp(prefix=prefix)))
    try:
        yield started
    finally:
        started.stop()


@dataclass
class ClusterSet:
    """A running Redis Cluster: its URL naming every node, and a way to fail a master
    over to its replica (with replicas) the way a crashed host would."""

    url: str
    ports: list[int]
    procs: _Processes

    def _live(self) -> list[int]:
        return [port for port, proc in self.procs.procs.items() if proc.poll() is None]

    def masters(self) -> list[int]:
        """The ports of the masters serving slots, as the first live node sees them
        (a master marked failed is left out)."""
        client = redis.Redis(port=self._live()[0], socket_connect_timeout=0.5)
        try:
            text = client.execute_command("CLUSTER", "NODES")
        finally:
            client.close()
        lines = text.decode() if isinstance(text, bytes) else str(text)
        found = []
        for line in lines.splitlines():
            fields = line.split()
            flags = fields[2].split(",")
            serving = len(fields) > 8
            if "master" in flags and serving and "fail" not in flags and "fail?" not in flags:
                found.append(int(fields[1].split("@")[0].rsplit(":", 1)[1]))
        return sorted(found)

    def kill_master(self, port: int | None = None) -> int:
        """SIGKILL a master (the first one by default); returns its port."""
        victim = port if port is not None else self.masters()[0]
        self.procs.kill(victim)
        return victim

    def wait_for_failover(self, old_port: int, timeout: float = 30.0) -> int:
        """Wait until a replica of the killed master took its slots and every live
        node says `cluster_state:ok`; returns the new master's port."""
        before = set(self.masters()) - {old_port}

        def healed() -> bool:
            live = self._live()
            states = []
            for port in live:
                client = redis.Redis(port=port, socket_connect_timeout=0.5)
                try:
                    states.append(client.cluster("INFO").get("cluster_state"))
                finally:
                    client.close()
            masters = set(self.masters())
            return all(s == "ok" for s in states) and old_port not in masters \
                and len(masters - before) == 1

        _wait(healed, "a replica promoted in the cluster", timeout)
        return (set(self.masters()) - before).pop()


def _slot_ranges(client: redis.Redis) -> dict[tuple[int, int], list[Any]]:
    """`CLUSTER SLOTS` as this node answers it: slot range -> its master and replicas."""
    ranges = client.execute_command("CLUSTER SLOTS")
    return {(int(r[0]), int(r[1])): r[2:] for r in ranges}


@contextmanager
def private_cluster_set(masters: int = 3, replicas: int = 0) -> Iterator[ClusterSet]:
    """A Redis Cluster of `masters` masters with `replicas` replicas each; a master
    that dies is replaced by its replica after `--cluster-node-timeout` (2 s)."""
    with _processes("prdigest-cluster-") as procs:
        ports: list[int] = []
        while len(ports) < masters * (1 + replicas):
            port = cluster_port()
            if port in ports:
                continue
            try:
                procs.server(port, "--cluster-enabled", "yes", "--cluster-config-file",
                             f"nodes-{port}.conf", "--cluster-node-timeout", "2000",
                             "--repl-diskless-sync-delay", "0")
            except ServerExited:
                continue  # taken since it was found free: another port
            ports.append(port)
        subprocess.run(
            [_binary("redis-cli"), "--cluster", "create",
             *(f"127.0.0.1:{port}" for port in ports), "--cluster-replicas", str(replicas),
             "--cluster-yes"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        clients = [redis.Redis(port=port) for port in ports]

        cluster = ClusterSet(url="redis+cluster://" + ",".join(f"127.0.0.1:{port}"
                                                               for port in ports),
                             ports=ports, procs=procs)

        def settled() -> bool:
            infos = [c.cluster("INFO") for c in clients]
            roles = [c.info("replication") for c in clients]
            replicated = sum(1 for r in roles if r.get("role") == "slave"
                             and r.get("master_link_status") == "up") == masters * replicas
            # A client learns the layout from one node's CLUSTER SLOTS: every node must
            # already name each master's replicas there, or a client started now
            # would not know there is a replica to wait for.
            layouts_complete = all(
                len(nodes) == 1 + replicas
                for c in clients for nodes in _slot_ranges(c).values())
            return all(i.get("cluster_state") == "ok"
                       and int(i.get("cluster_known_nodes", 0)) == len(ports) for i in infos) \
                and len(cluster.masters()) == masters and replicated and layouts_complete

        _wait(settled, "cluster_state:ok on every node", timeout=30)
        for client in clients:
            client.close()
        yield cluster


@contextmanager
def private_cluster(masters: int = 3) -> Iterator[str]:
    """A Redis Cluster of `masters` nodes (no replicas); yields its
    `redis+cluster://` URL naming every node."""
    with private_cluster_set(masters) as cluster:
        yield cluster.url


@dataclass
class SentinelSet:
    """A master, its replica and a Sentinel watching them."""

    url: str
    master_port: int
    replica_port: int
    sentinel_port: int
    procs: _Processes

    def master_address(self) -> tuple[str, int]:
        client = redis.Redis(port=self.sentinel_port)
        try:
            host, port = client.sentinel_get_master_addr_by_name(SENTINEL_SERVICE)
        finally:
            client.close()
        return str(host.decode() if isinstance(host, bytes) else host), int(port)

    def kill_master(self) -> int:
        """SIGKILL the current master; returns its port."""
        port = self.master_address()[1]
        self.procs.kill(port)
        return port

    def wait_for_failover(self, old_port: int, timeout: float = 60.0) -> int:
        """Wait until the Sentinel names a master other than `old_port`, and that
        master takes writes; returns its port."""
        def promoted() -> bool:
            port = self.master_address()[1]
            if port == old_port:
                return False
            client = redis.Redis(port=port, socket_connect_timeout=0.5)
            try:
                return bool(client.info("replication").get("role") == "master")
            finally:
                client.close()

        _wait(promoted, "a replica promoted by the Sentinel", timeout)
        return self.master_address()[1]


@contextmanager
def private_sentinel() -> Iterator[SentinelSet]:
    """A master, a replica and one Sentinel (quorum 1); yields them with the
    `redis+sentinel://` URL of the service."""
    with ExitStack() as stack:
        procs = stack.enter_context(_processes("prdigest-sentinel-"))
        master, replica, sentinel = free_port(), free_port(), free_port()
        procs.server(master)
        procs.server(replica, "--replicaof", "127.0.0.1", str(master))
        client = redis.Redis(port=replica)
        _wait(lambda: client.info("replication").get("master_link_status") == "up",
              "the replica in sync")
        client.close()
        procs.sentinel(sentinel, master)
        watcher = redis.Redis(port=sentinel)
        _wait(lambda: len(watcher.sentinel_slaves(SENTINEL_SERVICE)) > 0,
              "the Sentinel knowing the replica")
        watcher.close()
        yield SentinelSet(url=f"redis+sentinel://127.0.0.1:{sentinel}/{SENTINEL_SERVICE}/0",
                          master_port=master, replica_port=replica, sentinel_port=sentinel,
                          procs=procs)


def flush(url: str) -> None:
    """Empty every node behind `url` (tests start from nothing)."""
    from bot.store.redis.client import sync_client

    client = sync_client(url)
    try:
        if url.startswith("redis+cluster"):
            client.flushall(target_nodes="primaries")  # type: ignore[call-arg]
        else:
            client.flushall()
    finally:
        client.close()




def all_keys(client: redis.Redis, pattern: str = "*") -> list[bytes]:
    """Every key matching `pattern` on every node (a cluster's KEYS asks one node)."""
    if isinstance(client, redis.Redis):
        return list(client.keys(pattern))
    found: list[bytes] = []
    for node in client.get_primaries():  # type: ignore[attr-defined]
        found += client.keys(pattern, target_nodes=node)
    return found
