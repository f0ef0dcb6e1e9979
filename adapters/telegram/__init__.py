"""Telegram: updates to questions (`inbound`), the PTB adapter (`adapter`), its aiohttp
networking (`request`), its settings (`settings`). Kept empty so the registry can read
the settings without importing python-telegram-bot."""
