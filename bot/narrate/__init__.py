"""The optional narrator: a language model words the engine's digest in the channel's
language, and a verifier lets through only what the facts support.

Off unless `[llm]` is configured. Layout: `schema` (the answers' types, their JSON
Schema, reading them out of real replies), `normal` (untrusted text as a reader sees
it), `redact` and `hygiene` (untrusted text in data blocks), `injection` (instructions
planted in PR text), `facts` (the fact pack), `prompts` (words and token bounds),
`client` (one call, its deadline, the retry policy), `breaker` (the circuit),
`figures`, `language`, `rules`, `grounds` and `verify` (the verifier), `wording` (the
engine's own summary sentences), `apply` (verified words into the digest), `second`
(the optional model check), `narrator` (batches, the week, cache, budget).
"""

from __future__ import annotations

from bot.clock import SYSTEM_CLOCK, Clock
from bot.config import Config
from bot.events import Events
from bot.extras import require
from bot.narrate.narrator import (
    Budget,
    MemoryNarrations,
    NarrationStore,
    Narrator,
)

__all__ = ["Budget", "MemoryNarrations", "NarrationStore", "Narrator",
           "narrator_for"]


def narrator_for(config: Config, store: NarrationStore | None = None, *,
                 events: Events | None = None, enabled: bool = True,
                 clock: Clock = SYSTEM_CLOCK) -> Narrator | None:
    """The narrator `config` asks for (its deadlines on the process's `clock`), or None
    when `[llm]` is absent or it is turned off for this run (`--no-llm`). Building it
    makes no network call."""
    if config.llm is None or not enabled:
        return None
    require("llm", "the narrator ([llm] in the config)", ("openai",))
    return Narrator(config.llm, store, events=events, clock=clock)
