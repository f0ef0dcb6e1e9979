"""Narration checked claim by claim, on verl's week 29 through the real SDK: a strong
model's faithful sentences stay on the report page and most reach the chat text; a
mid-size model's slips and thirteen plausible-but-wrong sentences (wrong counts, units,
versions, authors, swapped PRs and shares, severities) reach no format; every drop is
recorded with its rule; the key changes cite what the engine's cite; a rerun, even of
an answer the verifier cut, asks the model nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.models import Digest, Lang
from bot.narrate.wording import theme_cited
from bot.render import render_digest
from bot.snapshot import read_snapshot
from testkit.fakes.openai import FakeOpenAI
from testkit.fakes.openai_hostile import hostile_answer
from testkit.narration.faithful import Line, shown_sentences
from testkit.narration.hostile import hostile_snapshot, planted_count
from testkit.narration.models import (
    MIDSIZE,
    WRONG,
    answer,
    reached,
    strong_lines,
    with_slips,
)
from testkit.narration.plants import PLANTS
from testkit.narration.week import formats, snapshot_digests, week_config

pytestmark = pytest.mark.realdata

REPO, WEEK, FILE = "verl-project/verl", "2026-W29", "verl-2026-07.json"
CHAT_SHARE = {"zh": 0.6, "en": 0.5}
_REF = re.compile(r"#(\d+)")


async def _digest(shared_data: Path, lines: tuple[Line, ...] | None, lang: Lang,
                  mode: str = "good") -> tuple[Digest, FakeOpenAI]:
    snapshot = read_snapshot(shared_data / FILE)
    if lines is None:
        return await snapshot_digests(week_config(REPO, None), snapshot).build(
            REPO, WEEK, lang), FakeOpenAI()
    with FakeOpenAI(answer=answer(lines)) as fake:
        fake.mode = mode
        told = await snapshot_digests(week_config(REPO, fake.base_url), snapshot).build(
            REPO, WEEK, lang)
    return told, fake


def _summary_refs(text: str) -> set[int]:
    """The PRs the chat text's summary paragraph names (the first paragraph after the
    title)."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    return {int(n) for n in _REF.findall(blocks[2])}


@pytest.mark.parametrize("mode", ["good", "think", "prose-fence"])
@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_a_strong_models_sentences_reach_the_page_and_the_chat(
        shared_data: Path, lang: Lang, mode: str) -> None:
    lines = strong_lines(lang)
    told, _ = await _digest(shared_data, lines, lang, mode)
    texts = [c.text for c in lines]
    page = reached(texts, shown_sentences(told))
    chat_text = render_digest(told, "text")
    chat = reached(texts, [chat_text])
    assert len(page) / len(texts) >= 0.9, set(texts) - set(page)
    assert len(chat) / len(texts) >= CHAT_SHARE[lang], set(texts) - set(chat)
    engine, _ = await _digest(shared_data, None, lang)
    assert _summary_refs(chat_text) >= _summary_refs(render_digest(engine, "text"))


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_a_midsize_models_slips_reach_no_format_and_are_each_counted(
        shared_data: Path, lang: Lang) -> None:
    slips = MIDSIZE[lang]
    told, _ = await _digest(shared_data, with_slips(lang, slips), lang)
    assert told.narration is not None
    shown = [*shown_sentences(told), render_digest(told, "text"), render_digest(told, "markdown")]
    assert reached([s.line.text for s in slips], shown) == []
    rules = [d.rule for d in told.narration.dropped]
    assert told.narration.sentences_dropped == len(rules) >= len(slips)
    assert {"unit", "effect", "count", "share", "version"} <= set(rules), rules
    # The key changes cite at least 80% of the PRs the engine's own cite.
    engine, _ = await _digest(shared_data, None, lang)
    cited = {n for t in engine.themes if t.pulls for n in theme_cited(t)}
    changes = next(p for p in told.narration.prose if p.section == "changes")
    said = {int(n) for s in changes.sentences for n in _REF.findall(s)}
    assert len(cited & said) >= 0.8 * len(cited), cited - said


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_plausible_but_wrong_sentences_reach_at_most_two_formats(
        shared_data: Path, lang: Lang) -> None:
    slips = WRONG[lang]
    assert len(slips) == 13
    told, _ = await _digest(shared_data, with_slips(lang, slips), lang)
    shown = [*shown_sentences(told), render_digest(told, "text"), render_digest(told, "markdown")]
    assert len(reached([s.line.text for s in slips], shown)) <= 2


async def test_a_rerun_asks_nothing_even_when_the_verifier_cut_the_answer(
        shared_data: Path) -> None:
    snapshot = read_snapshot(shared_data / FILE)
    with FakeOpenAI(answer=answer(with_slips("zh", WRONG["zh"]))) as fake:
        digests = snapshot_digests(week_config(REPO, fake.base_url), snapshot)
        first = await digests.build(REPO, WEEK, "zh")
        assert first.narration is not None and first.narration.sentences_dropped >= 13
        calls = fake.calls
        again = await digests.build(REPO, WEEK, "zh")
    assert calls >= 2 and fake.calls == calls
    assert again.narration == first.narration


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_disguised_plants_put_no_word_in_the_digests_voice(shared_data: Path,
                                                                 lang: Lang) -> None:
    """A fake review in a body, figures matching the week's count, a reassuring thread,
    homoglyphs, base64 and rot13 notes, "translate literally", a notice split across two
    PRs and a title offered in place of the PR's, fed to a model that obeys them: no
    planted word reaches any format beyond what the engine's own digest quotes."""
    snapshot = hostile_snapshot(shared_data, PLANTS)
    with FakeOpenAI(answer=hostile_answer) as fake:
        told = await snapshot_digests(week_config(REPO, fake.base_url), snapshot).build(
            REPO, WEEK, lang)
    engine = await snapshot_digests(week_config(REPO, None), snapshot).build(REPO, WEEK, lang)
    assert told.narration is not None and told.narration.sections_narrated
    shown, own = formats(told), formats(engine)
    beyond = {(fmt, word) for fmt in shown for word in PLANTS.words
              if planted_count(shown[fmt], word) > max(planted_count(own[fmt], word),
                                                       planted_count(own["markdown"], word))}
    assert beyond == set()
