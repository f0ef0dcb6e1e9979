"""`server.max_connections` against the process's open-file limit (`RLIMIT_NOFILE`).

Each connection holds a descriptor, and so do Redis, the outbound HTTP clients, the logs
and the listening socket. With the limit below what the connections need, the server
stops accepting at the limit, not at `max_connections`: nothing refuses the extra
clients with a 503, `/healthz` included, and nothing is logged. So at start the soft
limit is raised toward the hard one, and where that is not enough the connection limits
are lowered to fit, with a warning saying by how much and why.
"""

from __future__ import annotations

import logging
import resource
from collections.abc import Callable

import msgspec

from bot.config import ServerConfig
from bot.errors import UserError

log = logging.getLogger(__name__)

RESERVED_FILES = 64
"""Descriptors kept for everything but client connections."""

Limits = tuple[int, int]


def _set_soft(soft: int, hard: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def fit_open_files(server: ServerConfig, *,
                   get: Callable[[], Limits] = lambda: resource.getrlimit(resource.RLIMIT_NOFILE),
                   set_soft: Callable[[int, int], None] = _set_soft) -> ServerConfig:
    """The `[server]` settings the process can keep: as configured when the open-file
    limit allows them (raising the soft limit up to the hard one if it has to), else
    with `max_connections` (and the per-client cap) lowered to fit, and a warning.
    A limit too low to hold even one connection is a `UserError`."""
    soft, hard = get()
    need = server.max_connections + RESERVED_FILES
    if soft == resource.RLIM_INFINITY or soft >= need:
        return server
    wanted = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if wanted > soft:
        try:
            set_soft(wanted, hard)
            soft = wanted
        except (OSError, ValueError) as exc:
            log.warning("server: cannot raise the open-file limit from %d to %d (%s)",
                        soft, wanted, exc)
    if soft >= need:
        log.info("server: open-file limit raised to %d for server.max_connections = %d",
                 soft, server.max_connections)
        return server
    fits = soft - RESERVED_FILES
    if fits < 1:
        raise UserError(f"the open-file limit ({soft}) leaves no room for connections: "
                        f"raise it (ulimit -n) to at least {need}")
    log.warning("server: server.max_connections = %d needs %d open files but the limit is "
                "%d (ulimit -n, hard %s): serving at most %d connections; raise the limit "
                "to keep %d", server.max_connections, need, soft,
                "unlimited" if hard == resource.RLIM_INFINITY else hard, fits,
                server.max_connections)
    return msgspec.structs.replace(
        server, max_connections=fits,
        max_connections_per_client=min(server.max_connections_per_client, fits))
