"""A second corpus of faithful sentences, written apart from the first and in other
words (em-dash ranges, numerals as words, code spans with arguments, exception names,
"已" in a PR's own work, risk lines that keep their status in words the engine does not
use): kept in at least 95% of cases in Chinese and in English, bare and wrapped as real
endpoints wrap them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.models import Lang
from testkit.narration.faithful import held
from testkit.narration.faithful_more import MORE, ROUND

pytestmark = pytest.mark.realdata

KEPT_AT_LEAST = 0.95


def test_the_second_corpus_is_new_and_large() -> None:
    from testkit.narration.faithful import CORPUS

    assert len(MORE) >= 60
    assert {c.text for c in MORE}.isdisjoint({c.text for c in CORPUS})
    for lang in ("zh", "en"):
        assert sum(c.lang == lang for c in MORE) >= 30


@pytest.mark.parametrize("mode", ["good", "think", "prose-fence"])
@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_faithful_sentences_in_other_words_are_kept(shared_data: Path, lang: Lang,
                                                         mode: str) -> None:
    kept, total, lost = await held(shared_data, MORE, lang, mode, (ROUND,))
    assert total == sum(c.lang == lang for c in MORE)
    assert kept / total >= KEPT_AT_LEAST, lost
