"""Plain text out of GitHub Markdown: what summaries and quotes are cut from."""

from __future__ import annotations

import re

from bot.engine.conventions import parse_title

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DETAILS = re.compile(r"<details>.*?</details>", re.S | re.I)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)(]|\([^)]*\))*\)")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_INLINE_CODE = re.compile(r"(`[^`\n]+`)")
_INLINE_CODE_TEXT = re.compile(r"`([^`\n]+)`")
# A PR's address, written as GitHub writes a PR: `owner/repo#7061` (`#7061` in its own
# repository's text, `own_refs`).
_PULL_URL = re.compile(
    r"https?://github\.com/([\w.-]+/[\w.-]+)/pull/(\d+)(?:[/#?][^\s)\]]*)?")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_CODE_FENCE = re.compile(r"```.*?(```|$)", re.S)
_SPACE = re.compile(r"[ \t]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_SENTENCE_END = re.compile(
    r"(?<=[.!?。！？])(?<!\be\.g\.)(?<!\bi\.e\.)\s+(?=[A-Z0-9`\"'(\[*_]|[^\x00-\x7f])"
)


def strip_control(text: str) -> str:
    """Drop control and bidi-override characters that could disguise text in chat."""
    return _CONTROL.sub("", text)


def plain(markdown: str) -> str:
    """Readable plain text: no comments, images, HTML tags, link syntax or emphasis."""
    text = strip_control(markdown.replace("\r\n", "\n"))
    text = _COMMENT.sub("", text)
    text = _DETAILS.sub("", text)
    text = _CODE_FENCE.sub("", text)
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _PULL_URL.sub(r"\1#\2", text)
    # A tag inside a code span is text the PR quotes (`<script>`), not markup; a tag
    # between two words parts them ("one<br>two"), it never glues them.
    text = "".join(part if part.startswith("`") else _TAG.sub(_part_words, part)
                   for part in _INLINE_CODE.split(text))
    text = _EMPHASIS.sub(r"\2", text)
    return text


# Lines of a PR body that are no prose: commit trailers (`Signed-off-by:`,
# `Co-authored-by:`, `Change-Id:`), a squash's separator, tracker stamps
# (`--story=1018694 --user=...`), checklist items, quoted template hints and table rows.
_NOT_PROSE = re.compile(
    r"^\s*(?:[\w-]+-by\s*:|change-id\s*:|cc\s*:|-{3,}\s*$|={3,}\s*$|--(?:story|bug|task|user)="
    r"|[-*+]\s*\[[ xX]\]|>|\|)", re.I)
_TABLE_SEPARATOR = re.compile(r"^\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)+\|?\s*$")
_MARKDOWN_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.*?)\s*#*\s*$")
# The headings of a PR template's parts that say nothing of the change.
_TEMPLATE_PART = re.compile(
    r"checklist|check ?list|test(?:ing)? ?(?:plan|result|done|steps)?s?$|how (?:was|is|to) "
    r"(?:this |it )?test|screenshots?|type of (?:change|pr)|related (?:issues?|prs?)|"
    r"before submitting|additional (?:info|information|context|notes?)|reviewers?|"
    r"pre-?submission|contribution|release notes?|notes? for review|"
    r"自测|测试|截图|检查|清单|关联|相关(?:issue|问题)", re.I)


# GitHub's default squash message: each commit of the PR as `* subject` at a line's
# start, its own body under it, a blank line before the next (the co-authors after it).
_SQUASH_ENTRY = re.compile(r"\n\s*\n(?=\* )")


def squash_description(markdown: str, title: str = "") -> str:
    """A body written as GitHub's squash list says what each commit did, not the PR
    (`* chore(deps): bump quic-go` under "record recovered panics"): only its first
    entry may describe it - one in prose (a bullet wrapped line to line, not a commit's
    subject above a blank line), or the body of a first commit whose subject is the PR's
    `title` (the PR's description written in its first commit); any other body as it is."""
    text = markdown.replace("\r\n", "\n").strip()
    if not text.startswith("* "):
        return markdown
    entries = _SQUASH_ENTRY.split(text)
    if len(entries) < 2:
        return markdown
    first = entries[0][2:]
    subject, _, rest = first.partition("\n")
    if rest.strip() and not rest.startswith("\n"):
        return first
    return rest.strip() if title and _same_subject(subject, title) else ""


def _same_subject(subject: str, title: str) -> bool:
    """Whether a commit's subject says what the PR's title says: their text once their
    conventions are read off (`bot.engine.conventions`), case and spacing aside."""
    def said(text: str) -> str:
        return " ".join(parse_title(text).text.lower().split())
    return bool(said(subject)) and said(subject) == said(title)


def clean_body(markdown: str, title: str = "") -> str:
    """A PR body as prose (`plain`) without what is no prose: commit trailers, tables,
    checklists, quoted template hints, a squash list's commits and the parts of a PR
    template that say nothing of the change (checklist, test plan, screenshots): what
    summaries, figures and topic keywords read. `title`: the PR's (`squash_description`)."""
    kept: list[str] = []
    skipping = False
    for line in plain(squash_description(markdown, title)).splitlines():
        heading = _MARKDOWN_HEADING.match(line)
        if heading and heading.group(1):
            skipping = bool(_TEMPLATE_PART.search(heading.group(1).strip(" :：?？")))
            if skipping:
                continue
        if skipping or _NOT_PROSE.match(line) or _TABLE_SEPARATOR.match(line) \
                or line.count("|") >= 2:
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def own_refs(text: str, pull_url: str) -> str:
    """PRs of the repository `pull_url` is in written `#N` (the others keep their
    `owner/repo#N`)."""
    match = re.match(r"https?://github\.com/([\w.-]+/[\w.-]+)/pull/", pull_url)
    return text.replace(f"{match.group(1)}#", "#") if match and "#" in text else text


def _part_words(match: re.Match[str]) -> str:
    text = match.string
    before = text[match.start() - 1] if match.start() else " "
    after = text[match.end()] if match.end() < len(text) else " "
    return " " if before.isalnum() and after.isalnum() else ""


def unquote_code(text: str) -> str:
    """Code spans as their text (`drop` -> drop), a space kept where the span touched a
    word ("modifying`drop`" -> "modifying drop"), never gluing words together."""
    def spaced(match: re.Match[str]) -> str:
        whole = match.string
        before = " " if match.start() and whole[match.start() - 1].isalnum() else ""
        after = " " if match.end() < len(whole) and whole[match.end()].isalnum() else ""
        return f"{before}{match.group(1)}{after}"

    return _INLINE_CODE_TEXT.sub(spaced, text).replace("`", "")


def one_line(text: str) -> str:
    return _SPACE.sub(" ", " ".join(line.strip() for line in text.splitlines())).strip()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


ELLIPSIS = "…"
_TERMINAL = re.compile(r"[.!?。！？…)\]\"'`”’]$")
# A sentence that ends on one of these words leads into something (a code block, a
# list) that was not kept: it is incomplete.
_DANGLING = re.compile(
    r"(?:\b(?:as|is|was|are|were|to|the|a|an|of|by|with|and|or|from|in|for|like|below|"
    r"following|follows|that|this|these|via)|[:：,，;；(（-])$", re.I,
)
_DANGLING_TAIL = 16
_LOWER_WORD = re.compile(r"^[a-z][a-z]*(?:['’][a-z]+)?(?=[\s,.;:!?]|$)")


def clip(text: str, limit: int) -> str:
    """At most `limit` characters of whole sentences; where a sentence itself has to be
    cut, at a space (never mid-word), and the cut is marked with an ellipsis."""
    text = text.strip()
    if len(text) <= limit:
        return text
    taken = ""
    for sentence in sentences(text):
        candidate = f"{taken} {sentence}".strip()
        if len(candidate) > limit:
            break
        taken = candidate
    if taken:
        return taken
    return cut_words(text, limit)


# Where a clause ends, strongest first: English and Chinese.
CLAUSE_MARKS = ("; ", "；", ": ", "：", " — ", " – ", ", ", "，")


def _at_clause(window: str, past: int) -> str | None:
    """`window` up to its last clause boundary (the strongest mark first) beyond `past`
    characters, with an ellipsis; None where no clause ends there."""
    for mark in CLAUSE_MARKS:
        at = window.rfind(mark)
        if at > past:
            return window[:at].rstrip() + ELLIPSIS
    return None


def clause_cut(text: str, limit: int, *, openers: bool = True) -> str | None:
    """`text` cut before `limit` at the last clause boundary past a quarter of it, with
    an ellipsis; unchanged when it fits; None when no clause ends in time (a cut there
    would fall inside a clause). Without `openers`, only a punctuation mark ends a
    clause (a cut before " to " would split "from ~54 GiB to ~150 MiB")."""
    if len(text) <= limit:
        return text
    window = text[: limit - 1]
    cut = _at_clause(window, limit // 4)
    if cut is not None or not openers:
        return cut
    opening = max((window.rfind(word) for word in _CLAUSE_OPENERS), default=-1)
    if opening > limit // 4:
        return window[:opening].rstrip() + ELLIPSIS
    return None


# Words that open a clause or an adjunct of its own: a cut before one leaves the
# clause before it whole ("Disable X for vLLM older than 0.22.0…", before "to avoid").
_CLAUSE_OPENERS = (" to ", " so that ", " so ", " when ", " because ", " which ",
                   " instead of ", " without ", " while ", " with ", " for ", " via ")
_STOPPED = re.compile(r"[.!?。！？…][)\]\"'`”’]*$")


def end_sentence(text: str) -> str:
    """`text` ending with punctuation: a full stop added where it has none (a closing
    parenthesis is no end)."""
    text = text.rstrip()
    if not text or _STOPPED.search(text):
        return text
    return text + ("。" if re.search(r"[\u3400-\u9fff]$", text) else ".")


def cut_words(text: str, limit: int) -> str:
    """`text` cut before `limit`, at a clause boundary if one is past the middle, else
    at a space (never mid-word), with an ellipsis; unchanged when it fits."""
    if len(text) <= limit:
        return text
    window = text[: limit - 1]
    cut = _at_clause(window, limit // 2)
    if cut is not None:
        return cut
    space = window.rfind(" ")
    if space > limit // 2:
        window = window[:space]
    return window.rstrip(" ,;:-—，、；：") + ELLIPSIS


def is_complete(sentence: str) -> bool:
    """Whether a sentence can stand as written: it does not end leading into a part
    that was dropped (`... was built as`, `... as follows:`)."""
    sentence = sentence.rstrip()
    # Only the end can dangle: the tail is searched, longer than the longest word.
    return bool(sentence) and not _DANGLING.search(sentence[-_DANGLING_TAIL:])


def ends_sentence(text: str) -> bool:
    return bool(_TERMINAL.search(text.rstrip()))


def sentence_case(text: str) -> str:
    """The first letter in capitals when the text opens with a plain lowercase word;
    an identifier (`recv_buf`, `vLLM`, `gen_batch_size`) is left as written."""
    match = _LOWER_WORD.match(text)
    if not match:
        return text
    return text[0].upper() + text[1:]


def first_clause(text: str, limit: int) -> str:
    """The opening sentence of `text`, at most `limit` characters: what a one-line
    mention of the PR says, cut (and marked so) at a clause boundary when too long."""
    parts = sentences(text)
    return cut_words(parts[0] if parts else text.strip(), limit)


_WORD = re.compile(r"[a-z0-9][a-z0-9.+]*[a-z0-9+]|[a-z0-9]")
# Words that say nothing of a change on their own.
_SMALL_WORDS = frozenset({
    "a", "an", "the", "to", "for", "of", "and", "or", "with", "in", "on", "at", "by",
    "from", "when", "is", "are", "be", "this", "that", "it", "its", "as", "so", "into",
    "new", "pr", "also",
})


def _singular(word: str) -> str:
    """A word without its plural or third-person "s" ("falls" and "fall" are one)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") \
        else word


# A sentence whose words are this much the title's says the title again.
RESTATED_SHARE = 0.6


def restates(sentence: str, title: str) -> bool:
    """Whether `sentence` says little more than `title`, small words aside: at most one
    of its words is not the title's ("Enable vllm patch." under "restore vllm patch"),
    or most of them are ("Add a new nightly CI workflow for GRPO Qwen3.5-35B Megatron
    training on Ascend ..." under "add GRPO Qwen3.5-35B Megatron vLLM nightly test for
    Ascend")."""
    def words(text: str) -> set[str]:
        found = _WORD.findall(text.lower().replace("_", " ").replace("-", " "))
        return {_singular(w) for w in found} - _SMALL_WORDS
    said, titled = words(sentence), words(title)
    new = said - titled
    return len(new) <= 1 or len(said & titled) >= RESTATED_SHARE * len(said)
