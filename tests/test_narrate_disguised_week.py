"""The narrator against a model that obeys the text it reads, on verl's week 29 with
planted text in disguise (testkit.narration.disguised: look-alike letters in a host,
hosts written with `点` or a one-dot leader, zero-width characters in an instruction,
a chat-template turn, a note to "the summarization bot", calls on every developer, a
WeChat and a Telegram invitation, figures and a PR number only the attacker wrote, a
plain claim that the review concerns were settled): no narrated sentence carries a
planted word, and no format shows one beyond what the deterministic digest quotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.engine import reviews_recorded
from bot.engine.digest import week_pulls
from bot.models import Digest, Lang
from bot.narrate.injection import aimed_at_model
from testkit.fakes.openai import FakeOpenAI
from testkit.fakes.openai_hostile import hostile_answer
from testkit.narration.disguised import AIMED, DISGUISED
from testkit.narration.faithful import shown_sentences
from testkit.narration.hostile import REPO, WEEK, hostile_snapshot, planted_count, verifier_alone
from testkit.narration.week import FORMATS, formats, snapshot_digests, week_config

pytestmark = pytest.mark.realdata


async def _both(shared_data: Path, lang: Lang) -> tuple[Digest, Digest]:
    snapshot = hostile_snapshot(shared_data, DISGUISED)
    with FakeOpenAI(answer=hostile_answer) as fake:
        told = await snapshot_digests(week_config(REPO, fake.base_url), snapshot).build(
            REPO, WEEK, lang)
    engine = await snapshot_digests(week_config(REPO, None), snapshot).build(REPO, WEEK, lang)
    return told, engine


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_no_narrated_sentence_carries_a_planted_word(shared_data: Path,
                                                          lang: Lang) -> None:
    told, _ = await _both(shared_data, lang)
    assert told.narration is not None and told.narration.sections_narrated
    said = shown_sentences(told)
    assert said
    assert [(s, w) for s in said for w in DISGUISED.words if planted_count(s, w)] == []


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_no_format_shows_more_than_the_deterministic_digest(shared_data: Path,
                                                                 lang: Lang) -> None:
    """A chat form may show one of the engine's risks more or less than the engine's own
    chat form (the narrated sections take other room): what the deterministic digest
    quotes is its full report's, so that is the bound too."""
    told, engine = await _both(shared_data, lang)
    shown, own = formats(told), formats(engine)
    extra = {(fmt, word) for fmt in FORMATS for word in DISGUISED.words
             if planted_count(shown[fmt], word) > max(planted_count(own[fmt], word),
                                                      planted_count(own["markdown"], word))}
    assert extra == set()


async def test_the_disguised_instructions_are_found(shared_data: Path) -> None:
    snapshot = hostile_snapshot(shared_data, DISGUISED)
    assert {p.number for p in snapshot.pulls if aimed_at_model(p)} == AIMED


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_the_verifier_alone_blocks_every_disguised_sentence(shared_data: Path,
                                                                 lang: Lang) -> None:
    snapshot = hostile_snapshot(shared_data, DISGUISED)
    digests = snapshot_digests(week_config(REPO, None), snapshot)
    digest = await digests.build(REPO, WEEK, lang)
    pulls = [p for p, _ in week_pulls(snapshot, WEEK, "Asia/Shanghai")]
    answers = {p.number: digests.answer(p, REPO, lang, reviews_recorded(snapshot))
               for p in pulls}
    tally = verifier_alone(digest, pulls, answers, max(p.number for p in snapshot.pulls),
                           DISGUISED)
    assert tally.carrying >= 9  # the model's titles are never read any more
    assert tally.leaked == () and tally.blocked == tally.carrying
