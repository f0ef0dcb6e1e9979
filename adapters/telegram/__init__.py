"""Telegram: updates to questions (`inbound`), the PTB adapter (`adapter`), its aiohttp
networking (`request`), its messages (`render`, `markup`, `templates/`), its settings
(`settings`). Nothing here imports python-telegram-bot, so the registry can read the
settings and where the templates are without it."""

from __future__ import annotations

from pathlib import Path

# The platform's templates and their catalogs (`i18n/<lang>/LC_MESSAGES`), searched
# after the core's `templates/`.
TEMPLATES = Path(__file__).resolve().parent / "templates"
