"""An SDK's packages made without running their `__init__`, for an SDK whose packages
import all of it (every service, with its models) when an adapter needs a few of its
modules.

Under the import hook of `LeanPackages` each package it names is made with its
`__path__` set and its `__init__` left for later, so the submodules the adapter names
load only what they import themselves. A package made so completes itself - runs its
own `__init__` - the first time an attribute it does not hold yet is asked for, so
other code in the same process that uses the whole SDK still gets it. Installing the
hook imports nothing, and nothing changes for an SDK imported before it was installed.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

__all__ = ["LeanPackages"]


class LeanPackages(importlib.abc.MetaPathFinder):
    """The import hook for the packages `names`, completed in that order (a package
    whose `__init__` imports another of them comes after it)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self._lock = threading.RLock()
        self._real_loaders: dict[str, importlib.abc.Loader] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        self._real_loaders[fullname] = spec.loader
        spec.loader = _LeanLoader(self)
        return spec

    def install(self) -> None:
        """Install the hook (idempotent; nothing to do once the SDK is imported)."""
        with self._lock:
            if not any(name in sys.modules for name in self.names) and self not in sys.meta_path:
                sys.meta_path.insert(0, self)

    def complete(self) -> None:
        """Run the `__init__` of every package still lean: the whole SDK, as if imported."""
        with self._lock:
            for name in self.names:
                module = sys.modules.get(name)
                if module is not None and module.__dict__.pop("__getattr__", None) is not None:
                    self._real_loaders[name].exec_module(module)

    def completing(self, name: str) -> Callable[[str], Any]:
        """The `__getattr__` of the lean package `name`: completes, then answers."""
        def __getattr__(attribute: str) -> Any:
            if attribute.startswith("__"):
                raise AttributeError(attribute)
            self.complete()
            try:
                return sys.modules[name].__dict__[attribute]
            except KeyError:
                raise AttributeError(f"module {name!r} has no attribute {attribute!r}") \
                    from None

        return __getattr__


class _LeanLoader(importlib.abc.Loader):
    """Makes the package module (its `__path__` set, so submodules import) and leaves
    its `__init__` for `LeanPackages.complete`."""

    def __init__(self, hook: LeanPackages) -> None:
        self._hook = hook

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        module.__getattr__ = self._hook.completing(module.__name__)  # type: ignore[method-assign]
