"""A Feishu adapter built as a test describes it: credentials, `[platforms.feishu]` fields
and the adapter's other arguments in one set of keywords."""

from __future__ import annotations

from typing import Any

from adapters.feishu.adapter import FeishuAdapter
from adapters.feishu.settings import FeishuSecrets, FeishuSettings
from bot.chat.inbound import CommandAnswering, FirstSeen
from bot.config import Config

SECRET_FIELDS = ("verification_token", "encrypt_key")


def feishu_adapter(config: Config, handler: CommandAnswering, deduper: FirstSeen, *,
                   app_id: str, app_secret: str = "s", **options: Any) -> FeishuAdapter:
    """The adapter of app `app_id`: `options` are the webhook's secrets
    (`verification_token`, `encrypt_key`), fields of `[platforms.feishu]` (`domain`,
    `long_connection`) or the adapter's other arguments."""
    fields = set(FeishuSettings.__struct_fields__)
    settings = FeishuSettings(**{name: options.pop(name) for name in list(options)
                                 if name in fields})
    secrets = FeishuSecrets(app_id, app_secret, **{
        name: options.pop(name) for name in SECRET_FIELDS if name in options})
    return FeishuAdapter(config, handler, deduper, secrets, settings, **options)
