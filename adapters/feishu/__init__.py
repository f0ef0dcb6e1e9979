"""Feishu (Lark): events to questions (`inbound`), the adapter (`adapter`), what it sends
(`outbound`, `payloads`), the HTTP exchange (`transport`), tenant tokens (`tokens`), its
cards (`render`, `markup`, `templates/`), its settings (`settings`). Nothing here imports
lark-oapi, whose import costs seconds: only `adapter` and `transport` do."""

from __future__ import annotations

from pathlib import Path

# The platform's templates and their catalogs (`i18n/<lang>/LC_MESSAGES`), searched
# after the core's `templates/`.
TEMPLATES = Path(__file__).resolve().parent / "templates"
