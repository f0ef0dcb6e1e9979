"""Feishu (Lark): events to questions (`inbound`), the adapter (`adapter`), what it sends
(`outbound`, `payloads`), the HTTP exchange (`transport`), tenant tokens (`tokens`), its
cards (`render`: the core's documents as cards 2.0, `markup`), its settings
(`settings`). Nothing here imports lark-oapi, whose import costs seconds: only
`adapter`, `events`, `outbound`, `tokens` and `transport` do, and only the SDK modules
they name (`sdk.load()`, run here, keeps the SDK's packages from importing all of it
first)."""

from __future__ import annotations

from pathlib import Path

from adapters.feishu import sdk

sdk.load()

# Where the platform's own templates and catalogs would be (`i18n/<lang>/LC_MESSAGES`),
# searched after the core's: Feishu has none, every word of its cards is the core's.
TEMPLATES = Path(__file__).resolve().parent / "templates"
