"""The engine's own summary sentences, as its templates word them (plain text), for the
narrated summary to keep where the model's count or risk sentence did not hold."""

from __future__ import annotations

import re
from typing import Any

from bot.models import Digest
from bot.render.markup import markup_for
from bot.render.templating import environment
from bot.render.typeset import typeset
from bot.render.view import DigestView

_EN_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
_ZH_SENTENCE = re.compile(r"(?<=[。！？])")


def engine_summary(digest: Digest) -> list[str]:
    """The sentences of the engine's summary paragraph: the first states the PR count,
    the last the risk count."""
    module: Any = environment(digest.lang).get_template("common/prose.j2").make_module({})
    paragraph = typeset(str(module.summary(DigestView(digest), markup_for("text"))),
                        digest.lang).strip()
    split = _ZH_SENTENCE if digest.lang == "zh" else _EN_SENTENCE
    return [s.strip() for s in split.split(paragraph) if s.strip()]
