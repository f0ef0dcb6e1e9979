"""Feishu card button clicks (`card.action.trigger`, card JSON 2.0 callbacks) -> one
neutral `Question` carrying the action.

A button that acts carries `behaviors: [{"type": "callback", "value": {"action":
data}}]`, `data` being the command it runs (`bot.actions`). Feishu delivers the click
as a callback to the same request URL as events (or over the long connection),
encrypted and signed alike, and shows its answer - a toast, at most 3 s after the
click - to the clicker; the bot's answer to the command follows in place of the card
clicked (`im.v1.message.patch`) or replying to it, as `bot.chat.clicks.place_answer`
says. The callback's `event_id` is its delivery key. Feishu does not say
which language the clicker reads, so the answer is in the chat's; the toast carries
both and Feishu shows the clicker's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapters.feishu import TEMPLATES
from adapters.feishu.inbound import PLATFORM
from adapters.fields import mapping, str_or_none
from bot.chat.inbound import Question
from bot.i18n import translator

CARD_ACTION_EVENT = "card.action.trigger"
# Feishu limits a callback's value to a few KB; action data of ours is 64 bytes.
MAX_ACTION_CHARS = 2000
# Feishu's toast languages, for the catalogs'.
_TOAST_LANGS = (("zh_cn", "zh"), ("en_us", "en"))


def is_click(payload: Mapping[str, Any]) -> bool:
    """Whether an event payload (schema 2.0) is a card callback."""
    return mapping(payload.get("header")).get("event_type") == CARD_ACTION_EVENT


def question_from_click(payload: Mapping[str, Any]) -> Question | None:
    """The question a click on one of our acting buttons asks, or None (another kind of
    callback, a button whose value is not ours, a card outside a chat)."""
    if not is_click(payload):
        return None
    header, event = mapping(payload.get("header")), mapping(payload.get("event"))
    data = mapping(mapping(event.get("action")).get("value")).get("action")
    context, operator = mapping(event.get("context")), mapping(event.get("operator"))
    event_id = str_or_none(header.get("event_id"))
    chat = str_or_none(context.get("open_chat_id"))
    if not isinstance(data, str) or event_id is None or chat is None:
        return None
    return Question(
        platform=PLATFORM,
        channel_id=chat,
        user_id=str_or_none(operator.get("open_id")),
        text="",
        action=data[:MAX_ACTION_CHARS],
        delivery_key=event_id,
        reply_to=str_or_none(context.get("open_message_id")),
        raw=dict(payload),
    )


def on_its_way() -> dict[str, Any]:
    """The callback's answer to a click being answered: a toast, in the clicker's
    language as Feishu chooses among those given."""
    i18n = {code: translator(lang, (TEMPLATES,))("On its way…") for code, lang in _TOAST_LANGS}
    return {"toast": {"type": "info", "content": i18n["en_us"], "i18n": i18n}}
