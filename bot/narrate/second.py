"""The optional second pass (`[llm] check = "model"`): after the rules, the model is asked
of every kept sentence whether the facts it cites support it (a yes/no JSON answer),
and a "no" drops it. It costs one more call per digest (per `CHECK_BATCH` sentences),
cached like the others; when it fails, the rules' verdicts stand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from bot.narrate.apply import Candidate, Drop, PullWords
from bot.narrate.facts import PullFacts, WeekFacts
from bot.narrate.schema import CheckAnswer

CHECK_BATCH = 80


@dataclass(frozen=True)
class Claim:
    """A kept sentence, where it goes and the PRs whose facts it rests on."""

    where: str
    text: str
    pulls: tuple[int, ...]


def claims_of(words: Mapping[int, PullWords],
              week: Mapping[str, list[Candidate]] | None) -> list[Claim]:
    """Every sentence narration kept so far, in a stable order."""
    out: list[Claim] = []
    for number in sorted(words):
        w = words[number]
        if w.summary is not None:
            out.append(Claim(f"pull:{number}:summary", w.summary, (number,)))
        for index in sorted(w.risks):
            out.append(Claim(f"pull:{number}:risk:{index}", w.risks[index], (number,)))
    for section in sorted(week or {}):
        for c in (week or {})[section]:
            out.append(Claim(f"{c.where}|{c.text}", c.text, tuple(sorted(c.scope.cited))))
    return out


def check_data(claims: Iterable[Claim], pulls: Mapping[int, PullFacts],
               week: WeekFacts | None) -> dict[str, Any]:
    """The data block of one check request: the sentences, the facts of the PRs they
    cite and, for the week's sentences, the week as it was told."""
    listed = list(claims)
    own = sorted({n for c in listed for n in c.pulls if n in pulls})
    data: dict[str, Any] = {
        "sentences": [{"id": i, "text": c.text, "pulls": list(c.pulls)}
                      for i, c in enumerate(listed)],
        "pulls": [msgspec.to_builtins(pulls[n]) for n in own],
    }
    if week is not None and any(not c.where.startswith("pull:") for c in listed):
        data["week"] = msgspec.to_builtins(week)
    return data


def rejected(claims: list[Claim], answer: CheckAnswer) -> set[str]:
    """Where the sentences the model said no to were going."""
    return {claims[v.id].where for v in answer.verdicts
            if not v.supported and 0 <= v.id < len(claims)}


RULE = "model-check"
"""The rule a sentence the second pass rejected is recorded with."""


def without(words: Mapping[int, PullWords], week: Mapping[str, list[Candidate]] | None,
            dropped: set[str]
            ) -> tuple[dict[int, PullWords], dict[str, list[Candidate]] | None, list[Drop]]:
    """The narration less the rejected sentences, and the week's rejected ones (a PR's
    are recorded in its words)."""
    kept_words: dict[int, PullWords] = {}
    for number, w in words.items():
        summary = None if f"pull:{number}:summary" in dropped else w.summary
        risks = {i: t for i, t in w.risks.items() if f"pull:{number}:risk:{i}" not in dropped}
        lost = [(f"pull:{number}:summary", RULE)] if w.summary is not None and \
            summary is None else []
        lost += [(f"pull:{number}:risk:{i}", RULE) for i in w.risks if i not in risks]
        kept_words[number] = PullWords(number=number, summary=summary, risks=risks,
                                       drops=(*w.drops, *lost))
    if week is None:
        return kept_words, None, []
    kept_week = {section: [c for c in items if f"{c.where}|{c.text}" not in dropped]
                 for section, items in week.items()}
    rejected = [(c.where, RULE) for items in week.values() for c in items
                if f"{c.where}|{c.text}" in dropped]
    return kept_words, kept_week, rejected
