"""Feishu (Lark): events to questions (`inbound`), the adapter (`adapter`), the HTTP
exchange (`transport`), tenant tokens (`tokens`), its settings (`settings`). Kept empty:
lark-oapi's import costs seconds, so only `adapter` and `transport` import it."""
