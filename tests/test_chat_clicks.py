"""A click is read as the command its button carries, not by the grammar: in the
clicker's language before the chat's, once per click across replicas, and data that is
not an action of ours answered politely without reaching the handler."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.actions import encode_action
from bot.chat.inbound import Asker, Inbox, Question
from bot.config import ChannelConfig
from bot.models import Command, Lang, Reply
from testkit.coordination import claims_on, memory_port

CHAT = "slack:C0CLICKS"


class Handler:
    """Records each command with the asker it came with; a chat of `lang`, or none."""

    def __init__(self, lang: Lang | None, gate: asyncio.Event | None = None) -> None:
        self.channel = None if lang is None else ChannelConfig(
            platform="slack", id="C0CLICKS", repo="acme/lumen", lang=lang)
        self.asked: list[tuple[Command, Asker | None]] = []
        self.gate = gate

    async def chat_channel(self, chat: str) -> ChannelConfig | None:
        return self.channel if chat == CHAT else None

    async def handle(self, command: Command, *, channel: ChannelConfig | None,
                     user: str | None = None, asker: Asker | None = None) -> Reply:
        self.asked.append((command, asker))
        if self.gate is not None:
            await self.gate.wait()
        return Reply(kind="help", lang=command.lang)


def click(data: str | None, *, user_lang: Lang | None = None, key: str = "click:1"
          ) -> Question:
    return Question(platform="slack", channel_id="C0CLICKS", user_id="U0CLICKER", text="",
                    action=data, delivery_key=key, user_lang=user_lang)


RISKS = encode_action(Command(kind="risks", repo="acme/lumen", pull=1201))


@pytest.mark.parametrize(("chat_lang", "user_lang", "answered_in"), [
    ("en", "zh", "zh"),  # the clicker's language first
    ("zh", "en", "en"),
    ("zh", None, "zh"),  # else the chat's
    (None, None, "en"),  # else the platform's default
])
async def test_a_click_runs_its_command_in_the_clickers_language(
        chat_lang: Lang | None, user_lang: Lang | None, answered_in: Lang) -> None:
    handler = Handler(chat_lang)
    inbox = Inbox(handler, claims_on(memory_port()), default_lang="en")
    reply = await inbox.answer(click(RISKS, user_lang=user_lang))
    [(command, asker)] = handler.asked
    assert (command.kind, command.repo, command.pull) == ("risks", "acme/lumen", 1201)
    assert command.lang == answered_in and reply is not None and reply.lang == answered_in
    # Who clicked, where: what a settings change is checked against.
    assert asker is not None and (asker.chat, asker.user) == (CHAT, "U0CLICKER")


@pytest.mark.parametrize("data", ["", "risks 7035", '["pd1","drop"]', "x" * 5000])
@pytest.mark.parametrize("user_lang", ["zh", "en"])
async def test_data_that_is_not_an_action_is_answered_politely_and_runs_nothing(
        data: str, user_lang: Lang) -> None:
    handler = Handler("en")
    reply = await Inbox(handler, claims_on(memory_port())).answer(
        click(data, user_lang=user_lang))
    assert reply is not None
    assert (reply.kind, reply.error, reply.lang) == ("error", "unknown-action", user_lang)
    assert handler.asked == []


async def test_typed_text_is_still_read_by_the_grammar() -> None:
    handler = Handler("en")
    question = Question(platform="slack", channel_id="C0CLICKS", user_id="U1",
                        text="risks for #1201")
    await Inbox(handler, claims_on(memory_port())).answer(question)
    [(command, _)] = handler.asked
    assert (command.kind, command.pull) == ("risks", 1201)


async def test_one_click_reaching_two_replicas_is_answered_once() -> None:
    port = memory_port()
    gate = asyncio.Event()
    handler = Handler("en", gate=gate)
    sent: list[Any] = []

    async def send(reply: Reply) -> None:
        sent.append(reply)

    first, second = (Inbox(handler, claims_on(port), later_waits=(0.0, 0.0))
                     for _ in range(2))
    answering = asyncio.create_task(first.answer(click(RISKS), send=send))
    while not handler.asked:
        await asyncio.sleep(0)
    assert await second.answer(click(RISKS), send=send) is None  # held by the first
    gate.set()
    assert await answering is not None
    assert await second.answer(click(RISKS), send=send) is None  # and now answered
    assert len(sent) == 1 and len(handler.asked) == 1
