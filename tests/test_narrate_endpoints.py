"""Real endpoints, through the real SDK: answers after a `<think>`, in a fence inside
prose, inside a wrapper object or with fields of their own are read; an answer of the
wrong shape is that call's failure and never opens the circuit; forty sentences per
section still leave the chat form within its length."""

from __future__ import annotations

import pytest

from adapters.slack.render import render_digest_messages as slack_messages
from adapters.telegram.render import render_digest_messages as telegram_messages
from bot.narrate import Narrator
from bot.narrate.breaker import THRESHOLD
from bot.narrate.schema import PullBatch, SchemaError, WeekNarration, decode
from bot.narrate.wording import theme_room
from bot.render import render_digest
from bot.render.chat import CHAT_CEILING, visible_length
from testkit.fakes.openai import FakeOpenAI, shape_of
from testkit.narration.week import (
    REPO,
    WEEK,
    example_digests,
    llm_config,
    plain_config,
)

ALL_SECTIONS = ("summary", "changes", "trends", "risks", "key_prs", "suggestions")

@pytest.fixture(autouse=True)
def _fresh(fake: FakeOpenAI) -> None:
    fake.reset()



@pytest.mark.parametrize("mode", ["think", "prose-fence", "wrapper", "extra-fields"])
async def test_what_real_endpoints_send_is_read(fake: FakeOpenAI, mode: str) -> None:
    fake.mode = mode
    told = await example_digests(llm_config(fake.base_url)).build(REPO, WEEK, "zh")
    assert told.narration is not None
    assert told.narration.sections_narrated == ALL_SECTIONS
    assert told.narration.fallbacks == ()


@pytest.mark.parametrize(("content", "kind"), [
    ('<think>{"pulls": "no"} hmm</think>\n{"pulls": []}', PullBatch),
    ('Sure! ```json\n{"answer": {"pulls": []}}\n``` Hope it helps.', PullBatch),
    ('[{"number": 1, "title": "t", "summary": "s", "risks": []}]', PullBatch),
    ('{"number": 1, "title": "t", "summary": "s", "risks": [], "mood": "ok"}', PullBatch),
    ('{"summary": [], "changes": [], "trends": [], "suggestions": [], "extra": 1}',
     WeekNarration),
])
def test_the_answer_is_found_where_models_put_it(content: str, kind: type) -> None:
    assert isinstance(decode(content, kind), kind)


@pytest.mark.parametrize("content", ["no json here", '{"summary": "not a list"}',
                                     "<think>only thinking"])
def test_what_holds_no_answer_is_a_schema_error(content: str) -> None:
    with pytest.raises(SchemaError):
        decode(content, WeekNarration)


async def test_a_wrong_shape_fails_the_call_not_the_endpoint(fake: FakeOpenAI) -> None:
    fake.mode = "schema"
    narrator = Narrator(llm_config(fake.base_url).llm)  # type: ignore[arg-type]
    digests = example_digests(llm_config(fake.base_url), narrator=narrator)
    for _ in range(THRESHOLD):
        told = await digests.build(REPO, WEEK, "zh")
        assert told.narration is not None
        assert {f.reason for f in told.narration.fallbacks} == {"schema"}
    assert narrator.status()["circuit"] == "closed"
    assert fake.calls == 2 * THRESHOLD  # every digest still asked
    fake.mode = "good"
    told = await digests.build(REPO, WEEK, "zh")
    assert told.narration is not None and told.narration.fallbacks == ()


async def test_forty_sentences_per_section_keep_the_chat_form_within_its_length(
        fake: FakeOpenAI) -> None:
    fake.mode = "forty"
    told = await example_digests(llm_config(fake.base_url)).build(REPO, WEEK, "zh")
    engine = await example_digests(plain_config()).build(REPO, WEEK, "zh")
    assert told.narration is not None and "summary" in told.narration.sections_narrated
    prose = {p.section: p for p in told.narration.prose}
    summary = prose["summary"]
    # Five of the model's at most, and the engine's sentences naming what they did not.
    assert sum(role in ("focus", "highlight") for role in summary.keys) <= 5
    assert len(summary.sentences) <= 5 + 2 and len(prose["trends"].sentences) <= 4
    themes = [t for t in told.themes if t.pulls]
    for theme in themes:  # its room (one sentence below 6 PRs), and the engine's tail
        said = prose["changes"].keys.count(theme.key)
        assert 1 <= said <= theme_room(len(theme.pulls) + len(theme.others)) + 1
    assert told.narration.sentences_dropped >= 40 * 3  # the rest, each recorded
    assert len(told.suggestions) == len(engine.suggestions)
    assert visible_length(render_digest(told, "text")) <= CHAT_CEILING
    assert len(telegram_messages(told)) <= max(1, len(telegram_messages(engine)))
    assert len(slack_messages(told)) <= max(1, len(slack_messages(engine)))


async def test_a_refused_request_shape_is_asked_again_in_the_next_and_said_once(
        fake: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    """llama-cpp-python's server answers `json_schema` with a 500: the schema goes in
    JSON mode instead, the digest is narrated, and one log line says what to set."""
    fake.refused = {"json_schema"}
    config = llm_config(fake.base_url)
    assert config.llm is not None
    digests = example_digests(config, narrator=Narrator(config.llm))
    with caplog.at_level("WARNING", logger="bot.narrate.client"):
        told = await digests.build(REPO, WEEK, "zh")
    assert told.narration is not None and told.narration.fallbacks == ()
    shapes = [shape_of(r) for r in fake.requests]
    # Refused for the calls in flight when the first refusal came (the PRs' and the
    # week's), never after.
    assert shapes.count("json_schema") <= 2 and shapes[-1] == "json_object_schema", shapes
    fake.requests.clear()
    await digests.build(REPO, WEEK, "en")  # the process keeps asking the way that worked
    assert fake.requests and all(shape_of(r) == "json_object_schema"
                                 for r in fake.requests)
    asked = fake.requests[-1]["response_format"]
    assert asked["schema"]["type"] == "object" and asked["schema"]["required"]
    said = [r.getMessage() for r in caplog.records if "response_format" in r.getMessage()]
    assert len(said) == 1 and "json_object_schema" in said[0], said


async def test_an_endpoint_refusing_every_shape_falls_back_without_opening_the_circuit(
        fake: FakeOpenAI) -> None:
    fake.refused = {"json_schema", "json_object_schema", "json_object"}
    narrator = Narrator(llm_config(fake.base_url).llm)  # type: ignore[arg-type]
    told = await example_digests(llm_config(fake.base_url), narrator=narrator).build(
        REPO, WEEK, "zh")
    assert told.narration is not None and told.narration.sections_narrated == ()
    assert {f.reason for f in told.narration.fallbacks} == {"refused-shape"}
    assert narrator.breaker.state == "closed"
