"""A narrated digest of several repositories: the narrator words each repository's week
on its own (and writes `#12`, as a single repository's digest does), and its sentences
are drawn under that repository's name, where `#12` is whose it says; the combined list
of suggestions, read without the name, writes `org/a#12`."""

from __future__ import annotations

import re

import msgspec
import pytest

from bot.config import parse_config
from bot.digests import Digests
from bot.engine.combine import qualify
from bot.models import Digest, Lang
from bot.narrate import MemoryNarrations, narrator_for
from bot.render import render_digest
from bot.source import SnapshotSource
from testkit.fakes.openai import FakeOpenAI
from testkit.multi_repo import LUMEN, PRISM, WEEK, prism_snapshot, two_repo_config
from testkit.server_support import example_snapshot

CONFIG = two_repo_config()
# A PR reference not written after its repository: `#12`, `PR#12`, `PR #12`.
_BARE = re.compile(r"(?<![A-Za-z0-9_/.-])(?:PR\s?)?#\d+")


async def _narrated(lang: Lang, *repos: str) -> Digest:
    with FakeOpenAI(stall_seconds=5) as fake:
        config = msgspec.structs.replace(CONFIG, llm=parse_config({"llm": {
            "base_url": fake.base_url, "model": "fake-model", "timeout_seconds": 2,
            "budget_seconds": 20}}).llm)
        narrator = narrator_for(config, MemoryNarrations())
        assert narrator is not None
        try:
            return await Digests(config, SnapshotSource(example_snapshot(), prism_snapshot()),
                                 narrator=narrator).build_many(repos, WEEK, lang)
        finally:
            await narrator.close()


def _narrated_texts(part: Digest) -> list[str]:
    """Every sentence the narrator worded of one repository's part."""
    assert part.narration is not None
    told = set(part.narration.sections_narrated)
    texts = [s for prose in part.narration.prose for s in prose.sentences]
    if "key_prs" in told:
        texts += [k.summary for k in part.key_pulls]
    if "risks" in told:
        texts += [r.summary for r in part.risks]
    return texts + list(part.suggestions)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_narrated_references_sit_under_their_repository(lang: Lang) -> None:
    digest = await _narrated(lang, LUMEN, PRISM)
    lines = render_digest(digest, "markdown").splitlines()
    said = {part.repository: _narrated_texts(part) for part in digest.parts}
    for part in digest.parts:
        texts = said[part.repository]
        assert any(_BARE.search(text) for text in texts)  # the narrator did cite PRs
        assert not any(f"{LUMEN}#" in t or f"{PRISM}#" in t for t in texts)
        # prism's PRs are copies of lumen's: a sentence said of both is either's.
        others = {t[:30] for r, ts in said.items() if r != part.repository for t in ts}
        own = {t[:30] for t in texts if len(t) >= 30} - others
        narrated = [i for i, line in enumerate(lines) if any(text in line for text in own)]
        assert narrated
        for index in narrated:  # the nearest repository heading above is its own
            heading = next(line for line in reversed(lines[:index]) if line.startswith("###"))
            assert heading == f"### {part.repository}", lines[index]
    assert digest.suggestions and not any(_BARE.search(s) for s in digest.suggestions)


async def test_a_single_repositorys_narration_keeps_its_bare_references() -> None:
    digest = await _narrated("en", PRISM)
    assert digest.narration is not None
    sentences = [s for prose in digest.narration.prose for s in prose.sentences]
    assert any(re.search(r"(?<!/)#\d+", s) for s in sentences)
    assert not any(f"{PRISM}#" in s for s in sentences)


@pytest.mark.parametrize(("text", "written"), [
    ("See PR #12 and PR#13.", "See acme/a#12 and acme/a#13."),
    ("SPR #12", "SPR acme/a#12"),
])
def test_a_pr_word_before_the_reference_is_folded_into_it(text: str, written: str) -> None:
    assert qualify(text, "acme/a") == written
