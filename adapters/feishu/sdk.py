"""lark-oapi without its packages' eager imports.

Importing any `lark_oapi.x` first runs `lark_oapi/__init__.py`, which imports every
Open API service with its models and event processors: some 10,600 modules, ~164 MiB
and seconds on each replica serving Feishu. The adapter needs the core (config, tokens,
JSON, AES), the IM v1 requests and event model, the bot-identity helper and, in long
connection mode, the socket client. `load()` installs the shared import hook
(`adapters.lean_imports`) for the three packages whose `__init__` imports everything -
`lark_oapi`, `lark_oapi.api`, `lark_oapi.channel` - so the submodules the adapter names
load only what they import themselves (~480 modules, ~36 MiB; `python -m
bench.serve_memory`); other code asking for the whole SDK (`lark_oapi.Client`) still
gets it.
"""

from __future__ import annotations

from adapters.lean_imports import LeanPackages

# Completed in this order: `lark_oapi`'s __init__ star-imports `lark_oapi.api`.
LEAN_PACKAGES = ("lark_oapi.api", "lark_oapi.channel", "lark_oapi")

_HOOK = LeanPackages(LEAN_PACKAGES)


def load() -> None:
    """Install the import hook (idempotent; nothing to do once lark-oapi is imported)."""
    _HOOK.install()


def complete() -> None:
    """Run the `__init__` of every package still lean: the whole SDK, as if imported."""
    _HOOK.complete()
