"""lark-oapi without its packages' eager imports.

Importing any `lark_oapi.x` first runs `lark_oapi/__init__.py`, which imports every
Open API service with its models and event processors: some 10,600 modules, ~164 MiB
and seconds on each replica serving Feishu. The adapter needs the core (config, tokens,
JSON, AES), the IM v1 requests and event model, the bot-identity helper and, in long
connection mode, the socket client. `load()` installs an import hook under which the
three packages whose `__init__` imports everything - `lark_oapi`, `lark_oapi.api`,
`lark_oapi.channel` - are made without running it, so the submodules the adapter names
load only what they import themselves (~480 modules, ~36 MiB; `python -m
bench.serve_memory`). Installing the hook imports nothing.

A package made so completes itself - runs its own `__init__` - the first time an
attribute it does not hold yet is asked for (`lark_oapi.Client`), so other code in the
same process that uses the whole SDK still gets it. Nothing changes when lark-oapi was
imported before `load()`.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

# Completed in this order: `lark_oapi`'s __init__ star-imports `lark_oapi.api`.
LEAN_PACKAGES = ("lark_oapi.api", "lark_oapi.channel", "lark_oapi")

_lock = threading.RLock()
_real_loaders: dict[str, importlib.abc.Loader] = {}


class _LeanLoader(importlib.abc.Loader):
    """Makes the package module (its `__path__` set, so submodules import) and leaves
    its `__init__` for `complete()`."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        module.__getattr__ = _completing(module.__name__)  # type: ignore[method-assign]


class _LeanPackages(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in LEAN_PACKAGES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        _real_loaders[fullname] = spec.loader
        spec.loader = _LeanLoader()
        return spec


_HOOK = _LeanPackages()


def load() -> None:
    """Install the import hook (idempotent; nothing to do once lark-oapi is imported)."""
    with _lock:
        if "lark_oapi" not in sys.modules and _HOOK not in sys.meta_path:
            sys.meta_path.insert(0, _HOOK)


def complete() -> None:
    """Run the `__init__` of every package still lean: the whole SDK, as if imported."""
    with _lock:
        for name in LEAN_PACKAGES:
            module = sys.modules.get(name)
            if module is not None and module.__dict__.pop("__getattr__", None) is not None:
                _real_loaders[name].exec_module(module)


def _completing(name: str) -> Callable[[str], Any]:
    def __getattr__(attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        complete()
        try:
            return sys.modules[name].__dict__[attribute]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    return __getattr__
