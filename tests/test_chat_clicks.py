"""A click is read as the command its button carries, not by the grammar: in the
clicker's language before the chat's, once per click across replicas, and data that is
not an action of ours answered politely without reaching the handler. Its answer takes
the place of the message clicked when the button says so, the answer is for everyone
and one message, and the platform allows it; otherwise it comes beneath."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from bot.actions import encode_action
from bot.chat.clicks import place_answer
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


class Refused(Exception):
    """A platform's refusal to replace a message."""


class Chat:
    """Where a click's answer went: `replaced` (the message clicked, edited) or `added`
    (new messages); `refuse` makes every replace a refusal, `fail` any other error."""

    def __init__(self, *, refuse: bool = False, fail: bool = False) -> None:
        self.replaced: list[str] = []
        self.added: list[str] = []
        self.refuse, self.fail = refuse, fail

    async def replace(self, message: str) -> None:
        if self.fail:
            raise ConnectionError("no route")
        if self.refuse:
            raise Refused("message can't be edited")
        self.replaced.append(message)

    async def add(self, messages: Sequence[str]) -> None:
        self.added += messages

    async def answer(self, action: str | None, reply: Reply, messages: Sequence[str]) -> None:
        await place_answer(action, reply, messages, replace=self.replace, add=self.add,
                           refused=(Refused,))


IN_PLACE = encode_action(Command(kind="risks", repo="acme/lumen", pull=1201), in_place=True)
ANSWER = Reply(kind="pull", lang="en")


async def test_an_answers_button_replaces_the_message_clicked() -> None:
    chat = Chat()
    await chat.answer(IN_PLACE, ANSWER, ["risks of #1201"])
    assert (chat.replaced, chat.added) == (["risks of #1201"], [])


@pytest.mark.parametrize(("action", "reply", "messages"), [
    (RISKS, ANSWER, ["one"]),  # a digest's or a notice's button
    (None, ANSWER, ["one"]),  # typed, not clicked
    (IN_PLACE, ANSWER, ["part 1", "part 2"]),  # an answer of several messages
    (IN_PLACE, Reply(kind="error", lang="en", error="not-admin"), ["refused"]),
    (IN_PLACE, Reply(kind="help", lang="en"), ["help"]),
])
async def test_other_answers_come_beneath_the_message_clicked(
        action: str | None, reply: Reply, messages: list[str]) -> None:
    chat = Chat()
    await chat.answer(action, reply, messages)
    assert (chat.replaced, chat.added) == ([], messages)


async def test_an_answer_the_platform_will_not_put_in_place_comes_beneath() -> None:
    chat = Chat(refuse=True)
    await chat.answer(IN_PLACE, ANSWER, ["risks of #1201"])
    assert (chat.replaced, chat.added) == ([], ["risks of #1201"])


async def test_a_failure_that_is_not_a_refusal_is_the_callers() -> None:
    chat = Chat(fail=True)
    with pytest.raises(ConnectionError):
        await chat.answer(IN_PLACE, ANSWER, ["risks of #1201"])
    assert chat.added == []
