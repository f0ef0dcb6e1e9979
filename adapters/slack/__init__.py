"""Slack: inbound payloads (`inbound`), the Bolt adapter (`adapter`), what it sends
(`outbound`, `payloads`), its messages (`render`, `markup`, `templates/`), its settings
(`settings`). Nothing here imports Bolt, so the registry can read the settings and
where the templates are without it."""

from __future__ import annotations

from pathlib import Path

# The platform's templates and their catalogs (`i18n/<lang>/LC_MESSAGES`), searched
# after the core's `templates/`.
TEMPLATES = Path(__file__).resolve().parent / "templates"
