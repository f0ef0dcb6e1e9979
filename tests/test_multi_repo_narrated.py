"""A narrated digest of several repositories: the narrator words each repository's week
on its own (and writes `#12`, as a single repository's digest does), and every reference
in its sentences reaches the combined digest written `org/a#12`, as the engine's are."""

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


def _narrated_texts(digest: Digest) -> list[str]:
    """Every sentence of the parts the narrator worded."""
    texts: list[str] = []
    for part in digest.parts:
        assert part.narration is not None
        told = set(part.narration.sections_narrated)
        texts += [s for prose in part.narration.prose for s in prose.sentences]
        if "key_prs" in told:
            texts += [k.summary for k in part.key_pulls]
        if "risks" in told:
            texts += [r.summary for r in part.risks]
        texts += list(part.suggestions)
    return texts


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_narrated_references_name_their_repository(lang: Lang) -> None:
    digest = await _narrated(lang, LUMEN, PRISM)
    texts = _narrated_texts(digest)
    assert any(f"{PRISM}#" in text for text in texts)  # the narrator did cite PRs
    assert [text for text in texts if _BARE.search(text)] == []
    for fmt in ("markdown", "text"):
        shown = render_digest(digest, fmt)  # type: ignore[arg-type]
        narrated_lines = [line for line in shown.splitlines()
                          if any(text[:30] in line for text in texts if len(text) >= 30)]
        assert narrated_lines and not any(_BARE.search(line) for line in narrated_lines)


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
