"""The dependency order of the packages, read from the source (every import, those inside
functions included): a module imports only its own layer and the layers below it, no
import cycle exists, and only the composition roots import the chat adapters. The core
names no chat platform and imports no platform's SDK: a platform's settings, renderer,
templates and format name are its adapter's, and come in through `adapters.registry`,
so adding one edits nothing under `bot/`.

Layers, lowest first: foundation (records, config, weeks, words, sources, links) <-
engine <- render <- data (github, store, narrate: the optional model) <- digests <- chat
<- delivery <- roots (web, cli). Adapters sit beside the core: they may use the
foundation, render and chat (questions in, replies out), never the data, digests,
delivery or web layers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from testkit.code_words import code_words

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "adapters")

LAYERS: tuple[tuple[str, ...], ...] = (
    ("bot", "bot.clock", "bot.events", "bot.models", "bot.errors", "bot.validation",
     "bot.resources", "bot.config", "bot.config_fields", "bot.patterns",
     "bot.week", "bot.i18n", "bot.snapshot", "bot.source", "bot.links", "bot.redaction",
     "bot.pacing", "bot.logs", "bot.extras", "bot.actions"),
    ("bot.engine",),
    ("bot.render",),
    ("bot.github", "bot.store", "bot.narrate"),
    ("bot.digests", "bot.onboard", "bot.live"),
    ("bot.chat",),
    ("bot.delivery",),
    ("bot.compose",),
    ("bot.web", "bot.cli"),
)
ADAPTERS_MAY_USE = ("bot", "bot.clock", "bot.models", "bot.errors", "bot.validation",
                    "bot.resources", "bot.config", "bot.week", "bot.i18n", "bot.snapshot",
                    "bot.source", "bot.links", "bot.redaction", "bot.pacing", "bot.render",
                    "bot.chat", "bot.extras", "bot.logs", "bot.actions")
COMPOSITION_ROOTS = ("bot.compose", "bot.web.services", "bot.cli.platforms")
MAX_ADAPTER_IMPORTERS = 3


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of the project -> the project modules it imports, anywhere in it."""
    paths = {module_name(path, root): path for package in PACKAGES
             for path in sorted((root / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: Iterable[str] = ()
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from bot.render import sections` imports the module bot.render.sections.
                names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in paths
                         else node.module for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            imported |= {n for n in names if n.split(".")[0] in PACKAGES}
        graph[module] = imported
    return graph


def _within(module: str, prefixes: Iterable[str]) -> bool:
    """Whether `module` is one of `prefixes` or inside one (`bot` itself: only `bot`)."""
    return any(module == p or (p != "bot" and module.startswith(p + ".")) for p in prefixes)


def layer_of(module: str) -> int | None:
    """The index of the layer holding `module` (the longest matching prefix wins)."""
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if _within(module, [prefix]) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def violations(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import against the layering, as `importer -> imported: why`."""
    found: list[str] = []
    for module, imports in sorted(graph.items()):
        for imported in sorted(imports):
            if module.startswith("adapters"):
                if imported.startswith("bot") and not _within(imported, ADAPTERS_MAY_USE):
                    found.append(f"{module} -> {imported}: adapters meet the core through "
                                 "the contract")
                continue
            if imported.startswith("adapters"):
                if module not in COMPOSITION_ROOTS:
                    found.append(f"{module} -> {imported}: only composition roots import "
                                 "adapters")
                continue
            mine, theirs = layer_of(module), layer_of(imported)
            if mine is None or theirs is None:
                found.append(f"{module} -> {imported}: not in any layer")
            elif theirs > mine:
                found.append(f"{module} -> {imported}: a lower layer imports a higher one")
    return found


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The import cycles among the graph's modules (each found once, as a path)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if imported not in graph:
                continue
            if state.get(imported) == 1:
                found.append([*path[path.index(imported):], imported])
            elif imported not in state:
                visit(imported)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return found


GRAPH = import_graph()


def test_every_module_sits_in_a_layer() -> None:
    unplaced = [m for m in GRAPH if m.startswith("bot") and layer_of(m) is None]
    assert unplaced == []


def test_no_import_goes_against_the_layering() -> None:
    assert violations(GRAPH) == []


def test_there_is_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_at_most_the_composition_roots_import_adapters() -> None:
    importers = sorted(m for m, imports in GRAPH.items() if m.startswith("bot")
                       and any(i.startswith("adapters") for i in imports))
    assert set(importers) <= set(COMPOSITION_ROOTS)
    assert len(importers) <= MAX_ADAPTER_IMPORTERS


def test_delivery_imports_no_adapter() -> None:
    """What goes out - the schedule, notices, a post on demand - reaches the platforms
    through `Poster` and `NoticeSender`, composed with them by a root."""
    reaching = sorted(f"{module} -> {imported}" for module, imports in GRAPH.items()
                      if _within(module, ["bot.delivery"]) for imported in imports
                      if imported.startswith("adapters"))
    assert reaching == []


@pytest.mark.parametrize(("importer", "imported"), [
    ("bot.engine.risks", "bot.web.app"),
    ("bot.store.cache", "bot.digests"),
    ("bot.render.view", "bot.chat.handler"),
    ("bot.delivery.schedule", "adapters.slack.adapter"),
    ("adapters.telegram.adapter", "bot.store.claims"),
])
def test_a_forbidden_import_is_reported(importer: str, imported: str) -> None:
    graph = {module: set(imports) for module, imports in GRAPH.items()}
    graph.setdefault(importer, set()).add(imported)
    assert any(v.startswith(f"{importer} -> {imported}:") for v in violations(graph))


def test_a_cycle_is_reported_even_through_a_function_level_import(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "adapters").mkdir()
    (tmp_path / "bot" / "__init__.py").write_text("")
    (tmp_path / "bot" / "first.py").write_text("from bot.second import b\n")
    (tmp_path / "bot" / "second.py").write_text("def b() -> None:\n    import bot.first\n")
    graph = import_graph(tmp_path)
    assert cycles(graph) == [["bot.first", "bot.second", "bot.first"]]


# The chat platforms' SDKs: only their adapters import them.
PLATFORM_SDKS = ("slack_sdk", "slack_bolt", "telegram", "lark_oapi")
CORE = sorted(m for m in GRAPH if m == "bot" or m.startswith("bot."))


def _source(module: str) -> str:
    path = ROOT / Path(*module.split("."))
    return (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text()


@pytest.mark.parametrize("module", CORE)
def test_the_core_names_no_platform(module: str) -> None:
    """No name, string or attribute of the core's code (docstrings and comments aside,
    which may give a platform as an example) is a platform's: each comes from the
    registry (`adapters.registry.PLATFORMS`)."""
    from adapters.registry import PLATFORMS

    words = code_words(_source(module))
    for spec in PLATFORMS:
        assert not re.search(rf"(?<![a-z]){spec.name}(?![a-z])", words, re.I), (module, spec.name)


@pytest.mark.parametrize("module", CORE)
def test_the_core_imports_no_platform_sdk(module: str) -> None:
    tree = ast.parse(_source(module))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    assert imported.isdisjoint(PLATFORM_SDKS), module


def test_the_core_imports_no_platform_package() -> None:
    """The composition roots reach a platform through the registry (and the contract),
    never a platform's own package."""
    from adapters.registry import PLATFORMS

    packages = tuple(f"adapters.{spec.name}" for spec in PLATFORMS)
    reaching = sorted(f"{module} -> {imported}" for module in CORE
                      for imported in GRAPH[module] if _within(imported, packages))
    assert reaching == []


# Redis is one implementation of the coordination port (and the home of the cache and
# subscriptions kept in it): nothing else speaks it.
REDIS_IMPLEMENTATION = "bot.store.redis"
EVERY_MODULE = sorted(GRAPH)


def libraries(source: str) -> set[str]:
    """The top-level names of what `source` imports, anywhere in it (a function's import
    and one under `if TYPE_CHECKING` included)."""
    tree = ast.parse(source)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    return imported | {node.module.split(".")[0] for node in ast.walk(tree)
                       if isinstance(node, ast.ImportFrom) and node.module
                       and node.level == 0}


def speaking_redis_elsewhere(sources: Mapping[str, str]) -> list[str]:
    """The modules (name -> source) outside the Redis implementation that import redis."""
    return sorted(module for module, source in sources.items()
                  if "redis" in libraries(source)
                  and not _within(module, [REDIS_IMPLEMENTATION]))


def test_only_the_redis_implementation_imports_redis() -> None:
    sources = {module: _source(module) for module in EVERY_MODULE}
    assert any("redis" in libraries(source) for module, source in sources.items()
               if _within(module, [REDIS_IMPLEMENTATION]))
    assert speaking_redis_elsewhere(sources) == []


def test_a_module_importing_redis_elsewhere_is_reported() -> None:
    sneaky = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import redis.asyncio\n"
    inside = "def make() -> None:\n    from redis.asyncio import Redis\n"
    assert speaking_redis_elsewhere({"bot.delivery.sneaky": sneaky,
                                     "bot.store.redis.client": inside,
                                     "bot.store.redisish": "from redis import Redis\n",
                                     "bot.store.ledger": "import msgspec\n"}) == [
        "bot.delivery.sneaky", "bot.store.redisish"]


# --- time comes from the one Clock ------------------------------------------------------

CLOCK_CALLS = {("time", "time"), ("time", "monotonic"), ("time", "perf_counter"),
               ("time", "sleep"), ("asyncio", "sleep"), ("datetime", "now"),
               ("datetime", "utcnow")}
"""Reading or passing time other than through `bot.clock.Clock`."""
REAL_TIME: dict[str, tuple[set[str], str]] = {
    "bot.clock": ({"time.monotonic", "time.sleep", "asyncio.sleep", "datetime.now"},
                  "the system clock itself"),
    "bot.store.redis.coordination": ({"time.time"}, "the ledger index's scores track "
                                     "Redis's own key expiries, in real epoch seconds"),
    "bot.store.redis.weeks_index": ({"time.time"}, "the weeks index's scores track "
                                    "Redis's own key expiries, in real epoch seconds"),
    "bot.store.redis.failover": ({"asyncio.sleep"}, "the client's backoff across a real "
                                 "Redis failover, below any component's Clock"),
    "adapters.feishu.tokens": ({"time.time"}, "lark-oapi writes a tenant token's expiry "
                               "on the machine's clock (Unix seconds): the time left is "
                               "read against it once, then the token ages on the Clock"),
    "adapters.feishu.adapter": ({"time.time"}, "a signed event's timestamp is Feishu's "
                                "real time: a held date (serve --snapshot) must not make "
                                "every event stale"),
}
"""The modules of the core and the adapters that use real time directly, what they call
and why. Real time they bound without reading it - a request in flight (an HTTP
client's timeout), answers in flight at shutdown, a thread's join - and an SDK's own
timing (Bolt's and slack_sdk's signature age, Socket Mode's and lark-oapi's reconnects,
python-telegram-bot's polling back-off) are not listed: no module here reads it."""


def clock_calls(source: str) -> set[str]:
    """The uses of `CLOCK_CALLS` in `source`, by the modules' own names: `time.sleep(...)`,
    `from asyncio import sleep`, `datetime.now` passed as a value alike."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                (node.value.id, node.attr) in CLOCK_CALLS:
            found.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" for alias in node.names
                      if (node.module, alias.name) in CLOCK_CALLS}
    return found


def off_the_clock(sources: Mapping[str, str]) -> dict[str, set[str]]:
    """The modules (name -> source) of the core and the adapters that read or pass time
    directly, beyond what `REAL_TIME` allows them."""
    found = {}
    for module, source in sources.items():
        if module.split(".")[0] not in PACKAGES:
            continue
        beyond = clock_calls(source) - REAL_TIME.get(module, (set(), ""))[0]
        if beyond:
            found[module] = beyond
    return found


def test_the_core_and_the_adapters_take_their_time_from_the_clock() -> None:
    sources = {module: _source(module) for module in EVERY_MODULE}
    assert any(module.startswith("adapters.") for module in sources)
    assert off_the_clock(sources) == {}
    # Every exception is still needed: one that is not is taken off the list.
    assert {module: clock_calls(sources[module]) for module in REAL_TIME} == {
        module: calls for module, (calls, _) in REAL_TIME.items()}


def test_a_module_reading_time_itself_is_reported() -> None:
    sneaky = {
        "bot.narrate.sneaky": "import time\ndef late(d: float) -> bool:\n"
                              "    return time.monotonic() > d\n",
        "bot.github.napper": "from time import sleep\nsleep(1)\n",
        "bot.delivery.waiter": "import asyncio\nasync def f() -> None:\n"
                               "    await asyncio.sleep(1)\n",
        "bot.cli.today": "from datetime import datetime\nclock = datetime.now\n",
        "bot.store.redis.weeks_index": "import time\ntime.time()\ntime.sleep(1)\n",
        "bot.engine.fine": "from bot.clock import SYSTEM_CLOCK\nSYSTEM_CLOCK.now()\n",
        "adapters.slack.outside": "import time\ntime.sleep(1)\n",
        "adapters.telegram.flood": "from asyncio import sleep\n",
        "adapters.feishu.tokens": "import time\ntime.time()\ntime.monotonic()\n",
        "adapters.feishu.clicks": "from bot.clock import SYSTEM_CLOCK\nSYSTEM_CLOCK.now()\n",
        "testkit.clock": "import time\ntime.sleep(1)\n",
    }
    assert off_the_clock(sneaky) == {
        "bot.narrate.sneaky": {"time.monotonic"}, "bot.github.napper": {"time.sleep"},
        "bot.delivery.waiter": {"asyncio.sleep"}, "bot.cli.today": {"datetime.now"},
        "bot.store.redis.weeks_index": {"time.sleep"},
        "adapters.slack.outside": {"time.sleep"}, "adapters.telegram.flood": {"asyncio.sleep"},
        "adapters.feishu.tokens": {"time.monotonic"}}
