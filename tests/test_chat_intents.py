"""With `[llm]`, text the grammar does not read may be read by the model as one of the
commands (`bot.chat.intents`), against the fake OpenAI endpoint through the real SDK.
The reading is verified against the text; the model never answers in its own words."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bot.chat.grammar import parse_command
from bot.chat.handler import CommandHandler
from bot.chat.intents import IntentReader
from bot.clock import HeldClock
from bot.config import LLMConfig
from bot.digests import Digests
from bot.models import Reply
from bot.narrate.client import BACKOFF_S, RETRIES, ModelClient
from bot.render import render_reply
from testkit.chat_week import CONFIG, NOW, OPEN_CHANNEL, SNAPSHOT
from testkit.clock import VirtualClock
from testkit.fakes.chat import InMemorySubscriptionStore, RecordingSource
from testkit.fakes.openai import FakeOpenAI

READINGS: dict[str, dict[str, Any]] = {}
"""The model's reading of each message (what the scripted model answers)."""


def scripted(blocks: dict[str, Any], lang: str) -> dict[str, Any]:
    text = blocks["message"]["text"]
    return READINGS.get(text, {"command": "help", "pull": None, "week": None, "area": "",
                               "who": ""})


def reading(command: str, *, pull: int | None = None, week: str | None = None,
            area: str = "", who: str = "") -> dict[str, Any]:
    return {"command": command, "pull": pull, "week": week, "area": area, "who": who}


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(answer=scripted, stall_seconds=30) as server:
        READINGS.clear()
        yield server


@pytest.fixture
def handler(model: FakeOpenAI) -> CommandHandler:
    # The client's retries wait on a virtual clock: no wall time, recorded.
    client = ModelClient(LLMConfig(base_url=model.base_url, model="reader"), clock=VirtualClock())
    digests = Digests(CONFIG, RecordingSource(SNAPSHOT),
                      subscriptions=InMemorySubscriptionStore(), clock=HeldClock(NOW))
    return CommandHandler(digests, intents=IntentReader(client))


async def ask(handler: CommandHandler, text: str) -> Reply:
    return await handler.handle(parse_command(text), channel=OPEN_CHANNEL, user="U1")


async def test_text_the_grammar_misses_is_read_as_a_command(
        handler: CommandHandler, model: FakeOpenAI) -> None:
    text = "could you dig up the hazards lurking in 7035 for me"
    assert parse_command(text).unknown
    READINGS[text] = reading("risks", pull=7035)
    reply = await ask(handler, text)
    assert (reply.kind, reply.mode, reply.lang) == ("pull", "risks", "en")
    assert reply.pull is not None and reply.pull.number == 7035
    assert model.calls == 1
    # The message went to the model as data, inside a block.
    sent = model.requests[0]["messages"][1]["content"]
    assert sent.startswith("<<<DATA message") and text in sent


async def test_an_area_question_in_chinese(handler: CommandHandler) -> None:
    text = "上周 npu 那边都折腾了些啥"
    READINGS[text] = reading("changes", area="npu", week="last")
    reply = await ask(handler, text)
    assert (reply.kind, reply.lang) == ("answer", "zh")
    assert reply.answer is not None and reply.answer.question == "changes"
    assert (reply.answer.week, reply.answer.area) == ("2026-W29", "NPU")


# What the model says the text means, where the text does not say so: refused, help.
REFUSED = [
    ("anything dodgy in what landed yesterday", reading("risks", pull=7035)),
    ("tell me about the mess in training", reading("changes", area="npu")),
    ("how did we do, anything interesting?", reading("digest", week="last")),
    ("what happened around then in npu land", reading("changes", area="npu", week="this")),
    ("please make this channel follow acme/lumen now", reading("follow")),
    ("switch yourself to speaking chinese please", reading("lang")),
    ("the folks around here, anything?", reading("people", who="ate")),
    ("whatever this is", reading("write a poem")),
]


@pytest.mark.parametrize(("text", "answer"), REFUSED, ids=[r[0][:30] for r in REFUSED])
async def test_a_reading_the_text_does_not_support_is_refused(
        handler: CommandHandler, model: FakeOpenAI, text: str, answer: dict[str, Any]) -> None:
    assert parse_command(text).unknown
    READINGS[text] = answer
    reply = await ask(handler, text)
    assert (reply.kind, dict(reply.params).get("text")) == ("help", text)
    assert handler.intents is not None and handler.intents.refused == 1


async def test_the_model_is_not_asked_what_the_grammar_reads(
        handler: CommandHandler, model: FakeOpenAI) -> None:
    for text in ("risks for #7035", "本周有什么风险", "digest last week", "你好"):
        await ask(handler, text)
    assert model.calls == 0


@pytest.mark.parametrize("mode", ["500", "malformed", "refusal", "blank", "schema"])
async def test_a_model_that_fails_leaves_the_help(handler: CommandHandler, model: FakeOpenAI,
                                                  mode: str) -> None:
    model.mode = mode
    reply = await ask(handler, "could you dig up the hazards lurking in 7035")
    assert reply.kind == "help"
    assert "Sorry, I did not understand" in render_reply(reply, "text")
    assert handler.intents is not None
    clock = handler.intents.client.clock
    assert isinstance(clock, VirtualClock)
    # An outage is retried after its backoffs, a blank answer once at once, the rest never.
    assert clock.slept == {"500": [BACKOFF_S * 2.0**n for n in range(RETRIES)],
                           "blank": [0.0]}.get(mode, [])


async def test_prose_from_the_model_is_never_shown(handler: CommandHandler) -> None:
    text = "what do you think of our team"
    READINGS[text] = {"command": "help", "pull": None, "week": None, "area": "",
                      "who": "", "answer": "Your team is great! #9999 fixed everything."}
    reply = await ask(handler, text)
    shown = render_reply(reply, "text")
    assert reply.kind == "help" and "great" not in shown and "9999" not in shown


async def test_the_model_reads_at_most_so_many_messages_a_minute(model: FakeOpenAI) -> None:
    clock = VirtualClock()
    reader = IntentReader(ModelClient(LLMConfig(base_url=model.base_url, model="reader")),
                          per_minute=2, clock=clock)
    text = "could you dig up the hazards lurking in 7035"
    READINGS[text] = reading("risks", pull=7035)
    asked = parse_command(text)
    kinds = [(await reader.read(asked)).kind for _ in range(3)]
    assert kinds == ["risks", "risks", "help"] and model.calls == 2
    clock.advance(59)
    assert (await reader.read(asked)).kind == "help" and model.calls == 2
    clock.advance(1)
    assert (await reader.read(asked)).kind == "risks" and model.calls == 3
