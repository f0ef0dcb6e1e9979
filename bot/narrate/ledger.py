"""What narration did to a digest, section by section: which sections are narrated,
which fell back and why, the sentences shown, and every sentence the model wrote that
no format shows, with the rule that kept it out (`Narration.dropped`; its length is
`sentences_dropped`, and `/metrics` counts the same drops by section)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.models import DroppedSentence, Fallback, NarratedProse

ORDER = ("summary", "changes", "trends", "risks", "key_prs", "suggestions")
"""The narrated sections in the digest's order."""


def section_of(where: str) -> str:
    """The section a sentence was going to: `pull:N:summary` -> key_prs,
    `pull:N:risk:I` -> risks, `changes:ci` -> changes."""
    parts = where.split(":")
    if parts[0] == "pull":
        return "risks" if len(parts) > 2 and parts[2] == "risk" else "key_prs"
    return parts[0]


@dataclass
class Outcome:
    """What narration did to the digest, section by section."""

    model: str
    narrated: set[str] = field(default_factory=set)
    fallbacks: dict[str, str] = field(default_factory=dict)
    prose: dict[str, NarratedProse] = field(default_factory=dict)
    drops: list[DroppedSentence] = field(default_factory=list)

    def drop(self, where: str, rule: str) -> None:
        self.drops.append(DroppedSentence(where=where, rule=rule))

    def fall_back(self, section: str, reason: str) -> None:
        self.fallbacks[section] = reason
        self.narrated.discard(section)
        self.prose.pop(section, None)

    def tell(self, section: str, sentences: list[str], keys: list[str] | None = None
             ) -> None:
        self.narrated.add(section)
        self.prose[section] = NarratedProse(section=section, sentences=tuple(sentences),
                                            keys=tuple(keys or ()))

    @property
    def dropped(self) -> dict[str, int]:
        """Dropped sentences by section."""
        counts: dict[str, int] = {}
        for d in self.drops:
            section = section_of(d.where)
            counts[section] = counts.get(section, 0) + 1
        return counts

    def record(self) -> tuple[tuple[str, ...], tuple[Fallback, ...],
                              tuple[NarratedProse, ...], tuple[DroppedSentence, ...]]:
        return (tuple(s for s in ORDER if s in self.narrated),
                tuple(Fallback(section=s, reason=self.fallbacks[s]) for s in ORDER
                      if s in self.fallbacks),
                tuple(self.prose[s] for s in ORDER if s in self.prose),
                tuple(self.drops))
