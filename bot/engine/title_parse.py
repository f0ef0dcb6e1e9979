"""A PR title read as Chinese: its tokens and a parser of its verb, object and adjuncts.

Read by `bot.engine.headline`, which decides what of a parse may be shown. Every step
restores the position when it fails, so a failed step leaves nothing half-read; every
word comes from `bot.engine.lexicon`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from bot.engine.lexicon import Lexicon, Verb
from bot.engine.zh_text import HAN, join_words, tidy


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    kind: Literal["word", "code", "paren", "sym"]

    @property
    def low(self) -> str:
        return self.text.lower()


_PIECE = re.compile(r"`[^`]+`|\([^()]*\)|\[[^\]]*\]|\S+")
_SYMBOLS = frozenset({"+", "&", "-", "–", "—", "→", "->", "/", "<", ">", "<=", ">=", "|"})
_COMPARISON = frozenset({"<", ">", "<=", ">="})
NUMBER = re.compile(r"^[~≈]?v?\d+(?:[.,]\d+)*(?:%|x|×)?$")
_CODE = re.compile(r"_|\(|=|^/|[A-Za-z0-9]\.[A-Za-z_]")
_DETERMINERS = frozenset({"the", "a", "an"})
# Words that end a noun phrase: what follows them is another part of the title.
FUNCTION = frozenset({
    "and", "or", "of", "to", "for", "in", "on", "at", "by", "from", "with", "without",
    "into", "under", "over", "via", "during", "before", "after", "across", "per", "within",
    "through", "using", "when", "if", "while", "instead", "than", "as", "is", "are", "was",
    "were", "be", "been", "not", "no", "so", "because", "due", "that", "which", "it", "its",
    "their", "this", "these", "those", "vs", "then", "against", "like", "where",
})
# What a line may end before: the start of another part of the title, never a word.
REASONS = frozenset({"due", "because", "so", "to"})
_CONJUNCTIONS = {"and": "和", "&": "和", "or": "或", ",": "、", "+": "+", "/": "/"}
_CLAUSE_JOINS = frozenset({"and", "+", ","})

def tokens(text: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        if piece.startswith("`"):
            tokens.append(Token(piece.strip("`").strip(), "code"))
        elif piece.startswith("("):
            tokens.append(Token(piece[1:-1].strip(), "paren"))
        elif piece.startswith("["):
            continue  # a series marker ("[1/N]") or a tag after the text
        else:
            piece = piece.strip("\"'“”‘’")
            tail = ""
            while piece and piece[-1] in ",;:.!?" and not piece.endswith("()"):
                tail = piece[-1] + tail
                piece = piece[:-1]
            if piece:
                tokens.append(Token(piece, "sym" if piece in _SYMBOLS else "word"))
            tokens.extend(Token(mark, "sym") for mark in tail if mark in ",;:")
    return tokens


def title_case(tokens: list[Token]) -> bool:
    """Whether the title capitalises its words ("Sync ... Branch to Main"): then a
    capital says nothing about a name."""
    words = [t.text for t in tokens[1:] if t.kind == "word" and t.text.isalpha()
             and t.low not in FUNCTION and t.low not in _DETERMINERS]
    return len(words) >= 2 and sum(w[0].isupper() for w in words) >= 0.8 * len(words)


class TitleParser:
    """One title's tokens and a position; every parse step restores the position when
    it fails, so a failed step leaves nothing half-read."""

    def __init__(self, tokens: list[Token], lx: Lexicon) -> None:
        self.tokens = tokens
        self.lx = lx
        self.pos = 0
        self.title_case = title_case(tokens)
        self.dropped = False

    # --- looking ------------------------------------------------------------------

    def low(self, offset: int = 0) -> str:
        at = self.pos + offset
        return self.tokens[at].low if at < len(self.tokens) else ""

    @property
    def at_end(self) -> bool:
        return self.pos >= len(self.tokens)

    def verb_at(self, at: int) -> tuple[str, Verb, int] | None:
        """The verb written at token `at`, its entry and how many tokens it takes."""
        if at >= len(self.tokens) or self.tokens[at].kind != "word":
            return None
        first = self.tokens[at].low
        if at + 1 < len(self.tokens):
            key = self.lx.forms.get(f"{first} {self.tokens[at + 1].low}")
            if key:
                return key, self.lx.verbs[key], 2
        key = self.lx.forms.get(first)
        return (key, self.lx.verbs[key], 1) if key else None

    def term(self, low: str) -> str | None:
        """A glossary word (plural or not), a word kept as written, `non-X`, `a/b`."""
        words, kept = self.lx.words, self.lx.kept
        for form in _singulars(low):
            if form in words:
                return words[form]
            if form in kept:
                return form
        if low.startswith("non-") and (inner := self.term(low[4:]) or (
                low[4:] if low[4:] in self.lx.names else None)):
            return join_words(["非", inner])
        if "/" in low.strip("/"):
            parts = [self.term(part) for part in low.split("/")]
            if all(parts):
                return "/".join(p for p in parts if p)
        return None

    def nominal(self, at: int) -> str | None:
        """Token `at` as part of a noun phrase, or None where a noun phrase ends."""
        token = self.tokens[at]
        if token.kind == "code":
            return f"`{token.text}`"
        if token.kind != "word" or token.low in FUNCTION or token.low in _DETERMINERS:
            return None
        text, low, lx = token.text, token.low, self.lx
        if NUMBER.match(text):
            return text
        if low in lx.acronyms:
            return lx.acronyms[low]
        if low in lx.names:
            return text
        if _CODE.search(text) and re.search(r"[A-Za-z]", text):
            return f"`{text}`"
        if re.search(r"\d|[<>^%#§@]|.[A-Z]", text):
            return text  # vLLM, Qwen3.5, CP>1: a name
        capital = text[0].isupper()
        said = self.term(low)
        if capital and at > 0 and not self.title_case and (said is None or self.named_beside(at)):
            return text  # a capital inside a sentence-case title: a name (Ascend, Skip Manager)
        if said is not None:
            return said if said != low else _as_written(text, said)
        if capital and self.title_case and low not in lx.forms:
            return text
        if "/" in text.strip("/"):
            return text  # `actions/checkout`, a path or a pair the lexicon cannot say
        return None

    def unknown_name(self, at: int) -> str | None:
        """A word no glossary knows inside a parenthesis of names (`(prism)`): a name,
        kept as written; never a function word or a verb."""
        token = self.tokens[at]
        if token.kind != "word" or token.low in FUNCTION or token.low in self.lx.forms:
            return None
        return token.text if re.fullmatch(r"[A-Za-z][\w.+-]*", token.text) else None

    def named_beside(self, at: int) -> bool:
        """Whether a capitalised word stands beside another (`Skip Manager`, `WOQ
        Linear`): a name of several words, not a common word written with a capital."""
        for near in (at - 1, at + 1):
            if 0 < near < len(self.tokens):
                text = self.tokens[near].text
                if self.tokens[near].kind == "word" and text[:1].isupper():
                    return True
        return False

    def phrase(self) -> str | None:
        """A phrase of the lexicon starting here ("fully async"), longest first."""
        return self.take(self.lx.phrases, 3)

    def take(self, table: Mapping[tuple[str, ...], str], longest: int) -> str | None:
        """The longest entry of `table` written from here (its words taken), or None."""
        for size in range(longest, 0, -1):
            words = tuple(self.low(i) for i in range(size))
            if "" not in words and words in table:
                self.pos += size
                return table[words]
        return None

    # --- noun phrases -------------------------------------------------------------

    def noun(self) -> str | None:
        """A noun phrase, "X of Y" said "Y 的 X"; counts said with 个."""
        start = self.pos
        while self.low() in _DETERMINERS:
            self.pos += 1
        pieces: list[str] = []
        while not self.at_end:
            phrase = self.phrase()
            if phrase is not None:
                pieces.append(phrase)
                continue
            token = self.tokens[self.pos]
            if (token.kind == "sym" and token.text in _COMPARISON and pieces
                    and self.pos + 1 < len(self.tokens) and self.nominal(self.pos + 1)):
                pieces.append(token.text)
                self.pos += 1
                continue
            count = self.count(first=not pieces)
            if count is not None:
                pieces.append(count)
                continue
            said = self.nominal(self.pos)
            if said is None:
                break
            pieces.append(said)
            self.pos += 1
        while pieces and pieces[-1].endswith("的"):
            # An adjective after its noun ("memory required"): the phrase ends before it.
            pieces.pop()
            self.pos -= 1
        if not pieces:
            self.pos = start
            return None
        text = join_words(pieces)
        if len(pieces) == 1 and self.tokens[self.pos - 1].low == "support" and self.low() == "for":
            before = self.pos
            self.pos += 1
            what = self.noun()
            if what is None:
                self.pos = before
            else:
                text = join_words(["对", what, "的支持"])
        acting = self.participle()
        if acting is not None:
            text = join_words([acting, "的", text])
        while self.low() == "of":
            before = self.pos
            self.pos += 1
            owner = self.noun()
            if owner is None:
                self.pos = before
                break
            text = join_words([owner, "的", text])
        return text

    def participle(self) -> str | None:
        """A phrase after a noun that says what it does ("race bypassing CVE
        remediation" -> "绕过 CVE 修补的 ..."), said before the noun."""
        low = self.low()
        found = self.verb_at(self.pos)
        if (not found or not low.endswith("ing") or found[2] != 1 or low in self.lx.words
                or low in self.lx.adjuncts):  # "using X" is an adjunct, not a participle
            return None
        before = self.pos
        self.pos += 1
        obj = self.noun()
        if obj is None:
            self.pos = before
            return None
        return join_words([found[1].zh, obj])

    def count(self, first: bool) -> str | None:
        """`3 entrypoints tests` -> `3 个`, `four function docstrings` -> `四个`."""
        token = self.tokens[self.pos]
        nxt = self.pos + 1
        follows = (nxt < len(self.tokens) and self.tokens[nxt].kind == "word"
                   and self.term(self.tokens[nxt].low) is not None)
        if token.kind == "word" and token.low in self.lx.numbers and follows and first:
            self.pos += 1
            return self.lx.numbers[token.low]
        if token.kind == "word" and token.text.isdigit() and follows and first:
            self.pos += 1
            return f"{token.text} 个"
        return None

    def nouns(self) -> str | None:
        """Noun phrases joined by and, or, commas, `+` and `/`; a verb after the join
        starts another clause instead."""
        first = self.noun()
        if first is None:
            return None
        items, joins, ends = [first], [], [self.pos]
        while self.low() in _CONJUNCTIONS:
            before = self.pos
            join = self.low()
            self.pos += 1
            if self.verb_at(self.pos) and self.clause_follows():
                self.pos = before
                break
            nxt = self.noun()
            if nxt is None:
                self.pos = before
                break
            items.append(nxt)
            joins.append(join)
            ends.append(self.pos)
        if "," in joins and joins[-1] not in {"and", "or", "&"}:
            # "A, B" without "and": the comma ends the phrase (", 1.8% faster" follows).
            keep = joins.index(",") + 1
            items, joins = items[:keep], joins[:keep - 1]
            self.pos = ends[keep - 1]
        text = items[0]
        for join, item in zip(joins, items[1:], strict=True):
            said = _CONJUNCTIONS[join]
            text = join_words([text, said, item]) if said in "和或+" else text + said + item
        return text

    def clause_follows(self) -> bool:
        """Whether a verb phrase can be read from here (looked at, not taken)."""
        before, dropped = self.pos, self.dropped
        found = self.verb_phrase() is not None
        self.pos, self.dropped = before, dropped
        return found

    # --- verb phrases -------------------------------------------------------------

    def verb_phrase(self) -> str | None:
        start = self.pos
        adverb = ""
        if self.low() in self.lx.adverbs and self.verb_at(self.pos + 1):
            adverb = self.lx.adverbs[self.low()]
            self.pos += 1
        found = self.verb_at(self.pos)
        if found is None:
            self.pos = start
            return None
        _, verb, size = found
        self.pos += size
        if verb.negation:
            inner = self.verb_phrase()
            if inner is None:
                self.pos = start
                return None
            return join_words([adverb, verb.zh, inner])
        obj = self.nouns()
        before_verb: list[str] = []
        adverbs_after: list[str] = []
        after_object: list[str] = []
        frame: str | None = None
        while not self.at_end:
            word = self.low()
            token = self.tokens[self.pos]
            if token.kind == "paren":
                self.pos += 1
                names = self.paren_names(token.text)
                if names:
                    after_object.append(names)
                else:
                    self.dropped = True
                continue
            if word == "to" and self.base_verb_at(self.pos + 1):
                break  # "to support ...": a purpose, said by the tail
            if word in self.lx.adverbs and self.pos > start + size:
                adverbs_after.append(self.lx.adverbs[word])
                self.pos += 1
                continue
            fixed = self.adjunct_phrase()
            if fixed is not None:
                before_verb.append(fixed)
                continue
            if word in verb.frames and frame is None and (obj or "{o}" not in verb.frames[word]):
                target = self.after(1, self.nouns)
                if target is not None:
                    frame = verb.frames[word].format(o=obj or "", t=target)
                    continue
            if word == "instead" and self.low(1) == "of":
                other = self.after(2, self.noun)
                if other is not None:
                    after_object.append(join_words(["而非", other]))
                    continue
            if word == "when":
                clause = self.when()
                if clause is not None:
                    before_verb.append(clause)
                    continue
            if word == "by" and self.verb_at(self.pos + 1):
                means = self.after(1, self.verb_phrase)
                if means is not None:
                    before_verb.append(join_words(["通过", means]))
                    continue
            if word in self.lx.adjuncts:
                target = self.after(1, self.nouns)
                if target is not None:
                    before_verb.append(tidy(self.lx.adjuncts[word].format(t=target)))
                    continue
            break
        if frame is None and obj is None and not before_verb and not self.at_end:
            self.pos = start
            return None  # a verb alone says nothing ("Wait for ..." -> "等待")
        core = frame if frame is not None else join_words([verb.zh, obj or ""])
        text = join_words([*reversed(before_verb), adverb, *adverbs_after, tidy(core),
                           *after_object])
        return text + self.tail()

    def base_verb_at(self, at: int) -> bool:
        """A verb in its base form at `at` ("to support ..."), not a noun ("to Main")."""
        found = self.verb_at(at)
        return bool(found) and self.tokens[at].low == found[0].split(" ")[0]  # type: ignore[index]

    def adjunct_phrase(self) -> str | None:
        """An adjunct the lexicon says whole ("at config time" -> "在配置阶段")."""
        return self.take(self.lx.adjunct_phrases, 4)

    def after(self, skip: int, parse: object) -> str | None:
        """`parse` (a method) after `skip` tokens, or None with the position restored."""
        before = self.pos
        self.pos += skip
        said = parse()  # type: ignore[operator]
        if said is None:
            self.pos = before
        return said if isinstance(said, str) else None

    def when(self) -> str | None:
        """`when X is absent` -> `在 X 缺失时`."""
        before = self.pos
        self.pos += 1
        subject = self.noun()
        if subject and self.low() in {"is", "are"}:
            state = self.lx.states.get(self.low(1))
            if state is not None:
                self.pos += 2
                return join_words(["在", subject, state + "时"])
        self.pos = before
        return None

    def tail(self) -> str:
        """What may follow a clause: its purpose ("to fix ..." -> "，以修复 ..."), another
        clause ("and fix ci" -> "，并修复 CI"), a colon and what it introduces, or a
        trailing figure (", 1.8% E2E TPOT improvement"). Each is read to the end of the
        title or not at all."""
        word = self.low()
        if word == "to" and self.verb_at(self.pos + 1):
            purpose = self.whole_after(1, self.verb_phrase)
            if purpose is not None:
                return "，以" + purpose
        if word in _CLAUSE_JOINS and self.verb_at(self.pos + 1):
            more = self.whole_after(1, self.verb_phrase)
            if more is not None:
                return "，并" + more
        if word == ":":
            said = self.whole_after(1, self.verb_phrase) or self.whole_after(1, self.nouns)
            if said is not None:
                return "：" + said
        if word == ",":
            figure = self.whole_after(1, self.nouns)
            if figure is not None:
                return f"（{figure}）"
        return ""

    def whole_after(self, skip: int, parse: object) -> str | None:
        """`after`, kept only when it reads to the end of the title."""
        before, dropped = self.pos, self.dropped
        said = self.after(skip, parse)
        if said is not None and self.at_end:
            return said
        self.pos, self.dropped = before, dropped
        return None

    def paren_names(self, text: str) -> str | None:
        """A parenthesis that only lists names (`MiniMax M2, Qwen3`) -> `（MiniMax M2、Qwen3）`."""
        inner = TitleParser(tokens(text), self.lx)
        inner.title_case = False
        items = []
        for part in text.split(","):
            sub = TitleParser(tokens(part), self.lx)
            sub.title_case = False
            words = [sub.nominal(i) or sub.unknown_name(i) for i in range(len(sub.tokens))]
            if not words or not all(w and not HAN.search(w) for w in words):
                return None
            items.append(join_words([w for w in words if w]))
        return f"（{'、'.join(items)}）" if items and inner.tokens else None


def _as_written(text: str, form: str) -> str:
    """A kept word as the title writes it, in the singular (`Detokenizer`, `tokens` ->
    `token`)."""
    return text[: len(form)] if text.lower().startswith(form) else form


def _singulars(low: str) -> list[str]:
    forms = [low]
    if low.endswith("ies"):
        forms.append(low[:-3] + "y")
    if low.endswith("es"):
        forms.append(low[:-2])
    if low.endswith("s") and not low.endswith("ss"):
        forms.append(low[:-1])
    return forms


