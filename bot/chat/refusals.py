"""Error replies: what chat is told when a command cannot be answered, as data (a catalog
key and its parameters), and the exception that ends a command early with one."""

from __future__ import annotations

from collections.abc import Iterable

from bot.models import Command, Reply

ECHO_LIMIT = 80
"""Echoed user text and numbers are cut, so an error reply stays one short line."""


def echo(text: str) -> str:
    """User text as an error reply quotes it: one line, at most `ECHO_LIMIT` characters."""
    text = " ".join(text.split())
    return text if len(text) <= ECHO_LIMIT else text[: ECHO_LIMIT - 1] + "…"


def error_reply(asked: Command, key: str, /, *, topics: Iterable[str] = (),
                available: Iterable[str] = (), **params: str) -> Reply:
    """The `error` reply `key` (a sentence of the reply templates), in the asker's
    language."""
    return Reply(kind="error", lang=asked.lang, error=key, topics=tuple(topics),
                 available_topics=tuple(available), params=tuple(params.items()))


class Refusal(Exception):
    """A reply that ends the command early; carries the error reply to give."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.error)
        self.reply = reply


def refuse(asked: Command, key: str, /, **params: str) -> Refusal:
    """`Refusal` of `error_reply(asked, key, **params)`: `raise refuse(...)`."""
    return Refusal(error_reply(asked, key, **params))
