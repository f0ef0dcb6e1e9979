"""The verifier between the model and every renderer: a narrated sentence is kept only
when everything it states can be found in the facts it cites.

A sentence is read folded (`bot.narrate.normal`: NFKC, invisible characters out,
look-alike letters read as Latin, dots however written) and fails when a word mixes
Latin and look-alike letters, when it breaks a rule no fact can lift
(`bot.narrate.rules`: mentions, links, markup, speaking to readers, calling a concern
resolved), repeats an instruction aimed at a model (`bot.narrate.injection`), cites a
PR it may not (one outside the week, or outside its theme or suggestion), writes a PR
number its scope does not hold, states a figure, an identifier (in a code span, or
written bare as snake_case or a file path) or a host its scope does not hold, uses a
credential word or makes a claim (CI passed, approved, released) its cited PRs' own
facts do not support, or is not in the channel's language.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.models import Lang
from bot.narrate.claims import Grounds, claim_problem
from bot.narrate.figures import CODE_SPAN, PULL_REF, QUALIFIED_REF, figures_in
from bot.narrate.injection import kind_of
from bot.narrate.language import language_problem
from bot.narrate.normal import disguised, folded, visible
from bot.narrate.rules import (
    CLAIMS,
    CREDENTIAL,
    Part,
    bare_identifiers,
    hosts_in,
    prose_of,
    special_tokens,
    text_problem,
)

MAX_CHARS = 240
"""A sentence's visible length at most: the chat form's room for one item. The prompt
asks for this (`bot.narrate.prompts`), half of it in Chinese, where a character says
about twice as much."""


@dataclass(frozen=True)
class Scope:
    """What one sentence may state. `cited`: the PRs it says it speaks of (a PR's own
    narration cites that PR); `may_cite`: the PRs it may cite; `may_name`: the PR
    numbers it may write; `figures`: the figures it may state; `idents`: the
    identifiers of its facts (folded, casefolded: paths, code spans, names written as
    code), which its code spans and host-like tokens must be among; `claims`: the
    cited PRs' own facts, which a credential word or a claim must be found in; `names`:
    titles the sentence may quote in any language (a PR's, a theme's, a topic's)."""

    cited: frozenset[int]
    may_cite: frozenset[int]
    may_name: frozenset[int]
    figures: frozenset[str]
    idents: str
    claims: str
    names: tuple[str, ...] = ()
    grounds: Grounds = field(default_factory=Grounds)
    """The claim grounds: each figure, version, person and severity against the fact
    it names (`bot.narrate.claims`)."""


def check(text: str, scope: Scope, part: Part, lang: Lang) -> str | None:
    """Why the sentence must be dropped (a short reason word), or None when it holds."""
    shown = visible(text).strip()
    if not shown:
        return "blank"
    if len(shown) > MAX_CHARS or "\n" in shown:
        return "too-long"
    if disguised(shown):
        return "disguise"
    read = folded(shown)
    problem = text_problem(read, part)
    if problem is not None:
        return problem
    if kind_of(read) in ("model", "phishing"):  # an instruction it was fed, repeated
        return "instruction"
    if not scope.cited <= scope.may_cite:
        return "unknown-pull"
    named = {int(n) for n in PULL_REF.findall(CODE_SPAN.sub(" ", read))}
    named |= {int(n) for _, n in QUALIFIED_REF.findall(read)}
    if not named <= scope.may_name:
        return "uncited-pull" if named <= scope.may_cite else "unknown-pull"
    if not figures_in(read) <= scope.figures:
        return "figure"
    for ident in (*CODE_SPAN.findall(read), *special_tokens(read), *bare_identifiers(read)):
        if ident.strip().casefold() not in scope.idents:
            return "identifier"
    for host in hosts_in(read):
        if host.casefold() not in scope.idents:
            return "url"
    for match in CREDENTIAL.finditer(prose_of(read)):
        if match.group(0).casefold() not in scope.claims:
            return "credential"
    for name, (claim, support) in CLAIMS.items():
        if claim.search(prose_of(read)) and not support.search(scope.claims):
            return f"claim-{name}"
    problem = claim_problem(read, scope.grounds, scope.cited)
    if problem is not None:
        return problem
    return language_problem(_without_hosts(prose_of(read)), lang, scope.names)


def _without_hosts(prose: str) -> str:
    """Identifiers written bare (`trainer_base.py`) are no language's words."""
    for host in hosts_in(prose):
        prose = prose.replace(host, " ")
    return prose
