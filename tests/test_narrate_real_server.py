"""A real model server: llama-cpp-python's OpenAI-compatible server with the
SmolLM2-135M-Instruct GGUF, started on a free port. With the documented setting
(`response_format = "json_object_schema"`) every call returns schema-valid JSON, the
digest finishes within its budget, and nothing the small model invented reaches a
format; with the default (`json_schema`, which this server refuses) the client moves to
that setting by itself after one refusal."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import msgspec
import pytest

from bot.digests import Digests
from bot.narrate import MemoryNarrations, Narrator
from bot.narrate.client import CallFailed, ModelClient
from bot.narrate.hygiene import data_block
from bot.narrate.prompts import system_prompt
from bot.narrate.schema import PullBatch, PullNarration, WeekNarration
from bot.snapshot import read_snapshot
from bot.source import SnapshotSource
from testkit.llama_server import llama_server
from testkit.narration.faithful import shown_sentences
from testkit.narration.models import reached
from testkit.narration.week import (
    EXAMPLE,
    REPO,
    WEEK,
    formats,
    llm_config,
    plain_config,
)

pytestmark = [pytest.mark.realmodel, pytest.mark.slow]

# A 135M model reads about a hundred prompt tokens a second on two loaded cores: a
# three-PR week (about 3,500 prompt tokens over its two calls) takes it under a minute,
# the example's seventeen PRs longer than any budget a test should wait for.
SMALL_WEEK = (1201, 1203, 1206)
BUDGET_SECONDS = 300.0


def small_week() -> SnapshotSource:
    """Three PRs of the example week: a feature, a fix with a review concern, a change
    with a measured effect."""
    snapshot = read_snapshot(EXAMPLE / "snapshot.json")
    return SnapshotSource(msgspec.structs.replace(snapshot, pulls=tuple(
        p for p in snapshot.pulls if p.number in SMALL_WEEK)))


@pytest.fixture
def server() -> Iterator[str]:
    """A server of each test's own: one that a test left generating for a request it
    gave up on would keep the next test's calls waiting."""
    with llama_server() as base_url:
        yield base_url


def _refs(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"(?<![\w/&])#(\d+)", text)}


class Kept(MemoryNarrations):
    """The narrations store, which keeps every answer the model gave as it gave it."""

    def answers(self) -> list[str]:
        """Every sentence of every kept answer."""
        out: list[str] = []
        for (kind, _), raw in self._entries.items():
            if kind == "pull":
                told = msgspec.json.decode(raw, type=PullNarration)
                out += [told.summary, *(r.text for r in told.risks)]
            elif kind == "week":
                week = msgspec.json.decode(raw, type=WeekNarration)
                out += [s.text for s in (*week.summary, *week.changes, *week.trends,
                                         *week.suggestions)]
        return [s for s in out if s.strip()]


async def test_one_call_in_the_documented_shape_returns_schema_valid_json(server: str
                                                                         ) -> None:
    config = llm_config(server, response_format="json_object_schema", timeout_seconds=120)
    assert config.llm is not None
    client = ModelClient(config.llm)
    request = [{"role": "system", "content": system_prompt("en")},
               {"role": "user", "content": 'Task "pulls": narrate the PRs in the data block '
                '"pulls".\n\n' + data_block("pulls", {"pulls": [{
                    "number": 1205, "title": "[ckpt] feat: add save_lora_only",
                    "state": "merged", "type": "feat",
                    "body": "Only LoRA adapter weights are saved."}]})}]
    answer, usage = await client.ask(request, PullBatch, max_tokens=300,
                                     deadline=time.monotonic() + 120)
    await client.close()
    assert isinstance(answer, PullBatch) and usage.completion_tokens > 0


async def test_the_small_model_answers_in_shape_and_its_inventions_reach_no_format(
        server: str) -> None:
    lang = "en"
    config = llm_config(server, response_format="json_object_schema",
                        timeout_seconds=BUDGET_SECONDS - 20, budget_seconds=BUDGET_SECONDS,
                        max_concurrency=1)
    assert config.llm is not None
    store = Kept()
    narrator = Narrator(config.llm, store)
    started = time.monotonic()
    told = await Digests(config, small_week(), narrator=narrator).build(
        REPO, WEEK, lang)  # type: ignore[arg-type]
    elapsed = time.monotonic() - started
    assert told.narration is not None
    # Every call answered, in shape: a section may still fall back because the
    # verifier refused what the model wrote ("verifier", "missing"), never because
    # the server did not answer or answered out of shape.
    reasons = {f.reason for f in told.narration.fallbacks}
    assert not reasons & {"schema", "not-json", "server-error", "refused-shape", "timeout",
                          "budget"}, reasons
    assert elapsed <= BUDGET_SECONDS + 5
    said = store.answers()
    assert said  # the model did write: what follows checks its words, not an empty answer
    kept = shown_sentences(told)
    dropped = [s for s in said if not reached([s], kept)]
    assert told.narration.sentences_dropped >= len(dropped)  # each recorded with its rule
    # What the model wrote and the verifier refused is nowhere - unless the engine
    # says it too (the model often repeats a risk line or a PR's own summary).
    engine = formats(await Digests(plain_config(), small_week()).build(REPO, WEEK, lang))
    refused = [s for s in dropped if not reached([s], engine.values())]
    assert reached(refused, formats(told).values()) == []
    # A PR number the model made up is nowhere: each format names only what the
    # engine's own names (references in titles and quotes included).
    for name, text in formats(told).items():
        assert _refs(text) <= _refs(engine[name]) | _refs(engine["markdown"]), name


async def test_the_default_request_shape_moves_to_the_one_the_server_takes(
        server: str) -> None:
    config = llm_config(server, timeout_seconds=120)
    assert config.llm is not None
    client = ModelClient(config.llm)
    request = [{"role": "user", "content": 'Answer {"pulls": []} as JSON.'}]
    try:
        answer = (await client.ask(request, PullBatch, max_tokens=200,
                                   deadline=time.monotonic() + 120))[0]
        assert isinstance(answer, PullBatch)
    except CallFailed as failed:  # the small model may run past its tokens: not the shape
        assert failed.reason not in ("schema", "not-json", "server-error", "refused-shape")
    finally:
        await client.close()
    assert client.shape == "json_object_schema"
