"""Per-PR summaries, extracted from the PR body's what/why section.

Extractive on purpose: every word comes from the PR, figures stay verbatim. Where the
body says nothing useful, the summary is built from the title and the files.
"""

from __future__ import annotations

import re
from collections import Counter

from bot.engine.areas import is_code, is_generated, where_changed
from bot.engine.classify import Classification
from bot.engine.lexicon import lexicon
from bot.engine.text import (
    ELLIPSIS,
    clause_cut,
    clean_body,
    clip,
    end_sentence,
    ends_sentence,
    first_clause,
    is_complete,
    one_line,
    own_refs,
    sentence_case,
    sentences,
    unquote_code,
)
from bot.i18n import Translator
from bot.models import Lang, PullRequest

SUMMARY_LIMIT = 320
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.+?)\s*#*\s*$", re.M)
_WANTED = re.compile(
    r"what|why|summary|description|motivation|purpose|overview|changes|context|"
    r"变更|目的|概述|描述|动机|背景", re.I,
)
_BOILERPLATE = re.compile(
    r"^(as (the )?titled?\.?|see title\.?|n/?a\.?|none\.?|todo\.?|tbd\.?|wip\.?|"
    r"同标题。?|如题。?)$",
    re.I,
)
# A line that only points at issues ("fix #11910", "closes #5, #6.", "修复 #12") says
# nothing of the change itself.
_ISSUE_REF = r"(?:[\w.-]+/[\w.-]+)?#\d+|https?://\S+/(?:issues|pull)/\d+\S*"
_NOISE_LINE = re.compile(
    r"^\s*(>|- \[[ xX]\]|\* \[[ xX]\]|(related )?issues?\s*[:：]|"
    r"(?:(?:fix|fixe[sd]|close[sd]?|resolve[sd]?|see|refs?|related(?: to)?|part of|"
    r"修复|关闭|解决|关联|相关)\s*[:：]?\s*)?"
    rf"(?:{_ISSUE_REF})(?:\s*(?:[,，、&]|and|和)?\s*(?:{_ISSUE_REF}))*\s*[.。]?\s*$|"
    r"https?://\S+$|cc\b|/cc\b|@\w)", re.I,
)
_NUM = r"~?\d+(?:\.\d+)?(?:\s*[-–~]\s*\d+(?:\.\d+)?)?"
_UNIT = r"(?:[KMGT]i?B|ms|µs|us|s|%)"
# A measured effect: a before -> after pair, a speed-up factor, or a share that the
# words around it call faster, smaller or saved. A bare size or share (`~1–3% of
# parameter bytes`) describes the data, not an effect.
FIGURE = re.compile(
    rf"{_NUM}\s*{_UNIT}\s*(?:->|→|to)\s*{_NUM}\s*{_UNIT}(?![A-Za-z])"
    rf"|{_NUM}\s*[x×](?![A-Za-z0-9])"
    rf"|{_NUM}%"
)
_EFFECT_WORDS = re.compile(
    r"\b(?:faster|quicker|speed-?ups?|slower|improv\w*|throughput|latency|reduc\w*|less|lower|"
    r"higher|boost\w*|gains?|accelerat\w*|"
    r"sav(?:e|es|ed|ing)|smaller|shrink\w*|drop\w*|fewer|speeds? up|cut)\b", re.I,
)
EFFECT_WINDOW = 30


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading, text) pairs; text before the first heading has heading ''."""
    parts: list[tuple[str, str]] = []
    last_heading, last_end = "", 0
    for match in _HEADING.finditer(body):
        parts.append((last_heading, body[last_end:match.start()]))
        last_heading, last_end = match.group(1), match.end()
    parts.append((last_heading, body[last_end:]))
    return [(h, t) for h, t in parts if t.strip()]


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# Sentences that say nothing about the change: agreement, greetings, "as titled".
_FILLER = re.compile(
    r"^(?:(?:that|this|it) (?:makes sense|is expected)\b|thanks?\b|thank you\b|hi\b|hello\b|"
    r"hey\b|as (?:the )?titled?\b|see (?:the )?title\b|please (?:review|take a look)\b|"
    r"/?cc\b|lgtm\b)", re.I,
)
# The PR naming itself before saying what it does: "This PR fixes ..." -> "Fixes ...".
# A commit subject a squash body repeats opens with its gitmoji and conventional prefix
# ("🐛 fix(alert): align …"): both go.
_SELF_REFERENCE = re.compile(
    r"^(?:this|the) (?:pr|pull request|patch|change|commit)\s+(?=[a-z])|"
    r"^(?:(?:[\U0001f000-\U0001faff\u2190-\u2bff][\ufe0f\u200d]*|:[a-z0-9_+-]+:)\s*)*"
    r"(?:feat|fix|perf|refactor|chore|docs?|test|ci|build|style)\s*(?:\([^)]*\))?!?\s*:\s*",
    re.I,
)
LEAD_IN_LIMIT = 40
ENOUGH = 120


def _item_sentence(line: str) -> str:
    """A list item or a line as a sentence of its own, opening in capitals."""
    text = one_line(_SELF_REFERENCE.sub("", line.strip()))
    text = sentence_case(text)
    return text if ends_sentence(text) or not is_complete(text) else f"{text}."


def _paragraph_sentences(block: str) -> list[str]:
    """A block's sentences: list items each on their own, the lead-in to a list
    ("This PR", "The main changes are as follows:") dropped."""
    lines = [ln for ln in block.splitlines() if ln.strip() and not _NOISE_LINE.match(ln)]
    out: list[str] = []
    prose: list[str] = []
    for line in lines:
        if _LIST_ITEM.match(line):
            if prose:
                lead = one_line(" ".join(prose))
                if len(lead) > LEAD_IN_LIMIT and is_complete(lead):
                    out.extend(sentences(lead))
                prose = []
            item = _LIST_ITEM.sub("", line)
            if item.strip():
                out.append(_item_sentence(item))
        else:
            prose.append(line)
    if prose:
        out.extend(_prose_sentences(prose))
    return out


_LABEL = re.compile(r"^[\w ]{1,30}:\s")
# A line this long that ends mid-sentence was wrapped (git wraps commit bodies at about
# 72): the next line goes on with it, whatever it opens with (`Stop()`, `the total
# order: …`). A list of short lines without stops has a sentence on each.
WRAPPED_LINE = 60
_CODE_WORD = re.compile(r"^\S*(?:[()_]|::|\.\w)")


def _prose_sentences(lines: list[str]) -> list[str]:
    """Lines of one paragraph as sentences: a short line without an end that the next
    line does not continue (it opens in capitals or with a `label:`) is a sentence
    itself; a long one was wrapped and goes on (`WRAPPED_LINE`)."""
    out: list[str] = []
    current: list[str] = []
    for index, line in enumerate(lines):
        current.append(line)
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        # A long line goes on where the next opens in lower case or with code
        # (`Stop()`, `s.value`): a wrapped sentence, not a list of them.
        wrapped = len(line.strip()) >= WRAPPED_LINE and bool(
            following[:1].islower() or _CODE_WORD.match(following))
        if following and not ends_sentence(line) and not wrapped and (
                following[:1].isupper() or _LABEL.match(following)):
            out.extend(sentences(one_line(" ".join(current))))
            current = []
    if current:
        out.extend(sentences(one_line(" ".join(current))))
    return out


def _paragraphs(text: str) -> list[list[str]]:
    """The section's paragraphs, each as its sentences with filler and the PR's
    self-reference removed."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        kept = []
        for sentence in _paragraph_sentences(block):
            sentence = sentence_case(_SELF_REFERENCE.sub("", unquote_code(sentence)).strip())
            if len(sentence) > 3 and not _FILLER.match(sentence) and not _BOILERPLATE.match(
                    sentence):
                kept.append(sentence)
        if kept:
            paragraphs.append(kept)
    return paragraphs


def _whole_sentences(paragraphs: list[list[str]]) -> str:
    """Sentences in order until there is enough to say what the PR does; a sentence
    that leads into a dropped part (a code block) ends the summary, marked as cut."""
    taken: list[str] = []
    for index, paragraph in enumerate(paragraphs):
        for sentence in paragraph:
            if not is_complete(sentence):
                if taken:
                    return " ".join(taken)
                if index + 1 < len(paragraphs) and len(paragraph) == 1:
                    break  # a lead-in to the next paragraph ("... as follows:")
                return sentence.rstrip(" :：,，") + ELLIPSIS
            if taken and len(" ".join([*taken, sentence])) > SUMMARY_LIMIT:
                return " ".join(taken)
            if taken and not ends_sentence(taken[-1]):
                taken[-1] += "."
            taken.append(sentence)
        if len(" ".join(taken)) >= ENOUGH:
            break
    return " ".join(taken)


def body_summary(body: str | None) -> str | None:
    """Whole sentences of the what/why section, filler removed, or None."""
    if not body or not body.strip():
        return None
    return plain_summary(clean_body(body))


def plain_summary(text: str) -> str | None:
    """`body_summary` of a body already made plain (`bot.engine.text.plain`)."""
    sections = _sections(text)
    wanted = [t for h, t in sections if h and _WANTED.search(h)]
    candidates = wanted or [t for h, t in sections if not h] or [t for _, t in sections]
    for section in candidates:
        paragraphs = _paragraphs(section)
        if paragraphs:
            return clip(_whole_sentences(paragraphs), SUMMARY_LIMIT)
    return None


def figures(text: str | None, limit: int = 3) -> tuple[str, ...]:
    """Measured effects quoted verbatim (`1.9-3.1x`, `54 GiB to 150 MiB`, `30% faster`)."""
    return plain_figures(clean_body(text), limit) if text else ()


def plain_figures(flat: str, limit: int = 3) -> tuple[str, ...]:
    """`figures` of a body already made plain: a before -> after pair as it is; a share
    or a factor only where the words beside it make it an effect ("2x faster", "a 3x
    speedup", "30% less memory"), never a count ("8x H100", "~1-3% of the bytes")."""
    found: list[str] = []
    for match in FIGURE.finditer(flat):
        value = match.group(0).strip()
        if not _PAIR.search(value) and not _said_as_effect(flat, match, value):
            continue
        if not any(value in seen for seen in found):
            found.append(value)
        if len(found) >= limit:
            break
    return tuple(found)


_PAIR = re.compile(r"->|→|\bto\b")
# What a factor counts when it is no effect: GPUs, nodes, cards, devices ("8x H100").
_COUNTED = re.compile(r"^\s*(?:[A-Z]{1,3}\d{2,4}\w*|GPUs?|nodes?|cards?|devices?|machines?|"
                      r"workers?|replicas?|cores?|chips?|servers?)\b", re.I)
# A factor's effect word follows it closely ("3x faster") or comes just before it
# ("speedup of 2x", "up to 3x").
_FACTOR_AFTER = 24
_FACTOR_BEFORE = 24


def _said_as_effect(flat: str, match: re.Match[str], value: str) -> bool:
    after = flat[match.end():match.end() + (_FACTOR_AFTER if value[-1] in "x×" else
                                            EFFECT_WINDOW)]
    if value[-1] in "x×":
        if _COUNTED.match(after):
            return False
        before = flat[max(0, match.start() - _FACTOR_BEFORE):match.start()]
        return bool(_EFFECT_WORDS.search(after) or _EFFECT_WORDS.search(before)
                    or re.search(r"\bup to\s*$", before, re.I))
    around = flat[max(0, match.start() - EFFECT_WINDOW):match.end() + EFFECT_WINDOW]
    return bool(_EFFECT_WORDS.search(around))


def figure_text(figure: str, lang: Lang) -> str:
    """A measured figure as the digest writes it: verbatim in en; in zh a before ->
    after pair with an arrow ("~54 GiB to ~150 MiB" -> "~54 GiB → ~150 MiB")."""
    if lang != "zh":
        return figure
    return re.sub(r"\s*(?:->|\bto\b)\s*", " → ", figure)


def _main_dirs(pull: PullRequest) -> list[str]:
    """The two folders that say where the PR changed: those of its code first, then
    those most of its files are in (`where_changed`: a release-note fragment says
    nothing of where); files a tool writes (test snapshots, lock files) only where
    there is nothing else."""
    paths = where_changed(f.path for f in pull.files) or [f.path for f in pull.files]
    paths = [p for p in paths if not is_generated(p)] or paths
    dirs = Counter(path.rsplit("/", 1)[0] if "/" in path else "." for path in paths)
    code = {path.rsplit("/", 1)[0] if "/" in path else "." for path in paths if is_code(path)}
    ranked = sorted(dirs, key=lambda d: (d not in code, -dirs[d]))
    return ranked[:2]


def fallback_summary(pull: PullRequest, cls: Classification, t: Translator) -> str:
    """From the files when the body gives nothing. Not from the title: every place
    that shows a summary shows it right after the title."""
    files = len(pull.files) or (pull.changed_files or 0)
    dirs = [t("the repository root") if d == "." else d for d in _main_dirs(pull)]
    if not files:
        return t("No description given.")
    if not dirs:
        return t("Changes %(files)s (+%(added)d/-%(removed)d lines)",
                 files=t.n("%(num)d file", "%(num)d files", files),
                 added=pull.additions or 0, removed=pull.deletions or 0)
    return t(
        "Changes %(files)s in %(dirs)s (+%(added)d/-%(removed)d lines)",
        files=t.n("%(num)d file", "%(num)d files", files),
        dirs=t.join(dirs),
        added=pull.additions or 0,
        removed=pull.deletions or 0,
    )


def summarize(pull: PullRequest, cls: Classification, t: Translator) -> tuple[str, bool]:
    """The PR's summary, and whether it is its description's (else what its files say:
    an answer must not call that its description)."""
    summary = plain_summary(unclaimed(clean_body(pull.body, pull.title), cls)) \
        if pull.body else None
    if summary:
        return own_refs(summary, pull.url), True
    return fallback_summary(pull, cls, t), False


# What only a PR's maintainers may call it (`bot.engine.classify`): a security fix, a
# CVE, a breaking change. A body sentence that says so of a PR they do not call one is
# never said as the PR's summary or line.
_SECURITY_CLAIM = re.compile(
    r"\b(?:security|vulnerab\w*|exploit\w*|CVE-?\d*|GHSA-\S+)\b|安全|漏洞", re.I)
_BREAKING_CLAIM = re.compile(r"\bbreaking[ -]change|不兼容|破坏性", re.I)


def unclaimed(flat: str, cls: Classification) -> str:
    """`flat` (a body made prose) without the sentences that claim what the PR's title
    and labels do not: a security fix or a breaking change."""
    claims = [pattern for pattern, held in ((_SECURITY_CLAIM, cls.security),
                                            (_BREAKING_CLAIM, cls.breaking)) if not held]
    if not claims or not any(p.search(flat) for p in claims):
        return flat
    kept = []
    for line in flat.splitlines():
        said = [s for s in sentences(line) if not any(p.search(s) for p in claims)]
        if said or not line.strip():
            kept.append(" ".join(said))
    return "\n".join(kept)


LINE_LIMIT = 120
# A mention of another PR ("introduced in #6853") in a one-line description: the line
# sits next to its own PR number, where a second number would read as the same PR.
_OTHER_PULL = re.compile(
    r"\s*\(?\b(?:(?:introduced|added|broken|caused|see)\s+)?(?:in|by)?\s*#\d+\)?")
# A sentence that points elsewhere ("Seeing #6951, it changed ...") says what another
# PR did, not this one.
_POINTER = re.compile(r"^(?:seeing|see|following|per|as (?:in|per|discussed))\b", re.I)
# "This reduces ...", "It adds ...": the PR as the subject of its own change.
_SUBJECT = re.compile(r"^(?:this|it|we|now|here we)\s+(?=[a-z])", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_BACK_REFERENCES = frozenset({"those", "these", "this", "that", "them", "it", "both"})
_MODAL_VERB = re.compile(r"\b(?:should|will|now|so that)\s+([a-z]+)(?:\s+([a-z]+))?", re.I)
# Verbs that say a change in a body beyond those a title opens with.
_MORE_CHANGE_VERBS = frozenset({
    "makes", "make", "making", "changes", "change", "changed", "changing", "lets", "let",
    "introduces", "introduced", "resolves", "resolve", "resolving", "reducing", "adding",
    "allows", "enables", "integrates", "integrating", "saves", "stops", "reduces",
})


def _change_verb(word: str) -> bool:
    low = word.lower()
    return low in _MORE_CHANGE_VERBS or low in lexicon().forms


def change_score(sentence: str) -> int:
    """How plainly a sentence says what the PR changes: a change verb opening it (3), a
    modal one inside it ("should fall back", 1), a measured figure (2); a sentence that
    points at another PR, or only describes, scores 0."""
    if _POINTER.match(sentence):
        return 0
    words = _WORD.findall(_SUBJECT.sub("", sentence))
    score = 3 if words and _change_verb(words[0]) else 0
    if score and len(words) > 1 and words[1].lower() in _BACK_REFERENCES:
        score = 1  # "Fixes those paths": the change is in the sentences before
    if not score and any(_change_verb(" ".join(w for w in m.groups() if w)) or
                         _change_verb(m.group(1)) for m in _MODAL_VERB.finditer(sentence)):
        score = 1
    if FIGURE.search(sentence) and (score or _EFFECT_WORDS.search(sentence)):
        score += 2
    return score


def _candidates(flat: str) -> list[str]:
    """Every sentence of the body's what/why section (or its first), in order."""
    sections = _sections(flat)
    wanted = [t for h, t in sections if h and _WANTED.search(h)]
    chosen = wanted or [t for h, t in sections if not h] or [t for _, t in sections]
    for section in chosen:
        found = [s for paragraph in _paragraphs(section) for s in paragraph]
        if found:
            return found
    return []


def change_line(flat: str, limit: int = LINE_LIMIT) -> str | None:
    """The one sentence that says what the PR changes: the best by `change_score`, the
    earliest among equals, with its PR opening it as the subject dropped ("This reduces
    ..." -> "Reduces ..."), cut only where a clause ends (marked with an ellipsis), and
    ending with punctuation; None when every sentence only describes."""
    ranked = sorted(enumerate(_candidates(flat)), key=lambda item: (-change_score(item[1]),
                                                                      item[0]))
    for _, sentence in ranked:
        if change_score(sentence) == 0:
            break
        if not is_complete(sentence):
            continue  # "Adds an opt-in setting:" leads into a dropped code block
        text = sentence_case(_SUBJECT.sub("", sentence)) if _SUBJECT.match(sentence) else sentence
        text = _result_clause(text)
        if _LEANS_BACK.match(text):
            continue  # "Fix it by avoiding the double-transform": what "it" is, is above
        if "#" in text:
            text = _OTHER_PULL.sub("", text)
        fitted = clause_cut(text, limit)
        if fitted:
            return end_sentence(fitted)
    return None


# A change whose object is a word pointing back ("Fix it by …", "Moves them to …"): it
# cannot stand alone as the PR's line.
_LEANS_BACK = re.compile(r"^\w+\s+(?:it|this|that|them|these|those)\b(?!\s+(?:is|are)\b)",
                         re.I)
# "..., so X should ...": what the sentence says follows from what it opens with.
_SO = re.compile(r",?\s+so\s+(?!that\b)", re.I)


def _result_clause(sentence: str) -> str:
    """A sentence that opens with what led to the change and then says it ("V1 trainer
    introduces it so legacy `gen_batch_size` should fall back to ..."): its result
    clause, which stands alone; the sentence itself where it opens with a change verb."""
    words = _WORD.findall(sentence)
    if words and _change_verb(words[0]):
        return sentence
    parts = _SO.split(sentence, maxsplit=1)
    if len(parts) == 2 and _MODAL_VERB.search(parts[1]):
        return sentence_case(parts[1])
    return sentence


def summary_and_line(pull: PullRequest, cls: Classification, t: Translator,
                     flat: str | None = None) -> tuple[str, str]:
    """The summary, and the one line a theme says about the PR: the body's sentence that
    says the change (`change_line`), or the title's text where none does (a count of
    files is no description of what a PR does). `flat` is the body made plain, when
    already done."""
    flat = own_refs(clean_body(pull.body or "", pull.title) if flat is None else flat,
                    pull.url)
    flat = unclaimed(flat, cls)
    body = plain_summary(flat) if flat.strip() else None
    if body:
        return body, change_line(flat) or title_line(cls)
    return fallback_summary(pull, cls, t), title_line(cls)


def title_line(cls: Classification) -> str:
    """The one line about a PR whose body says nothing: its title's text, as a sentence."""
    return end_sentence(first_clause(sentence_case(cls.short_title), LINE_LIMIT))
