"""Slack: inbound payloads (`inbound`), the Bolt adapter (`adapter`), its settings
(`settings`). Kept empty so the registry can read the settings without Bolt."""
