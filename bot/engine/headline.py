"""A PR's title said in Chinese: its verb and type in Chinese, its names as written.

Deterministic and never guessing. A title is parsed as a verb, its object and the
adjuncts around them ("fix X in Y" -> "在 Y 中修复 X"), or as a noun phrase (said after
its type: "新功能：分片 delta 权重同步"), from the words of `bot.engine.lexicon` alone.
Identifiers and products stay as written, code in code spans. `headline` says how much
of a title it could say (`whole`, `head`, `type`); a digest's line (`said_in`) never
says less than the title: where the parse is not whole, the title as written follows
its type in Chinese ("修复：Foo Git authentication"), and a title written in Chinese is
used as written.
"""


from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import msgspec

from bot.engine.classify import Classification
from bot.engine.conventions import reverted_text
from bot.engine.lexicon import Lexicon, Verb, lexicon
from bot.engine.text import sentence_case
from bot.engine.title_parse import FUNCTION, NUMBER, REASONS, TitleParser, Token
from bot.engine.title_parse import tokens as read_tokens
from bot.engine.zh_text import HAN, join_words, starts_in_chinese, tidy
from bot.models import Lang

How = Literal["whole", "head", "type"]
_LETTER = re.compile("[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Headline:
    """The title in Chinese; `how` says how much of it: every word (`whole`), its head
    with the rest left to the full title (`head`), or only its type and names (`type`)."""

    text: str
    how: How


def _may_end_before(parser: TitleParser, verb: Verb | None) -> bool:
    """Whether the line may end where the parse stopped: before another part of the
    title (a preposition, a join, a parenthesis), never before a word; for a verb whose
    conditions decide what it means, only before a reason or a purpose."""
    if parser.at_end and not parser.dropped:
        return True
    if parser.at_end:
        return verb is None or not verb.narrows
    token = parser.tokens[parser.pos]
    boundary = token.kind in {"sym", "paren"} or token.low in FUNCTION
    if not boundary or token.low in {"to", "into"} or (
            verb is not None and token.low in verb.frames):
        return False  # inside a noun phrase, or short of what the verb needs ("point X to")
    if verb is not None and verb.narrows:
        return token.low in REASONS and not parser.dropped
    return True


def _names(tokens: list[Token], lx: Lexicon) -> list[str]:
    parser = TitleParser(tokens, lx)
    found: list[str] = []
    for at, token in enumerate(tokens):
        said = parser.nominal(at) if token.kind in {"word", "code"} else None
        if token.kind == "word" and (token.low in lx.forms or not _LETTER.search(said or "")):
            continue  # a verb, a figure: no name
        if said and not HAN.search(said) and not NUMBER.match(said) and said not in found:
            found.append(said)
    return found[:3]


def said_in(cls: Classification, lang: Lang, repository: str = "") -> str:
    """A PR's headline in a digest of `lang`; "" in en, where the title is shown as
    written. In zh never less than the title says: a title written in Chinese as written
    (`bot.engine.headline.as_written`); an English one said in Chinese where every word
    of it is said, else as written after its type in Chinese ("修复：Foo Git
    authentication"). A title whose subject is the repository itself ("verl add rl
    insight" in verl-project/verl) is said without it ("新增 rl insight")."""
    if lang != "zh":
        return ""
    undone = reverted_text(cls.short_title)
    if undone is not None:  # "回滚：在 macOS 14+ 上使用 `diskutil image`"
        inner = msgspec.structs.replace(cls, short_title=undone, type="other")
        other = f"{lexicon().type_label('other')}："
        taken_back = said_in(inner, lang, repository).removeprefix(other)
        return f"{lexicon().type_label('revert')}：{taken_back}"
    if HAN.search(cls.short_title):
        return as_written(cls)
    own = repository.rsplit("/", 1)[-1].lower()
    words = cls.short_title.split(" ", 1)
    if own and len(words) == 2 and words[0].lower() == own:
        said = headline(words[1], cls.type)
        if said.how == "whole":
            return said.text
    said = headline(cls.short_title, cls.type)
    return said.text if said.how == "whole" else as_written(cls)


# Verbs a Chinese title opens with that say its kind of change plainly: no type label
# before it. A title opening with another word ("取消并发起新构建时报错", "修改模板后…")
# may be telling the symptom, so its type is said.
_CHINESE_VERBS = re.compile(
    "^(?:修复|解决|修正|新增|增加|添加|支持|实现|引入|优化|提升|提高|改进|完善|重构|移除|"
    "删除|去除|清理|升级|补充|统一|替换|禁用|启用|适配|兼容|回滚|迁移|拆分)")


def as_written(cls: Classification) -> str:
    """A title as written, after its type in Chinese where its words do not open with a
    verb that says it ("修复：日期类型的子维度图例显示不全", "解决死循环问题"), a
    Chinese scope before it ("【图表】修复：…"). An English title's opening verb that
    says its type is not said twice ("修复：Foo Git authentication" for "Fix Foo Git
    authentication")."""
    text = cls.short_title.strip()
    label = lexicon().type_label(cls.type)
    # A title of no known kind is said as written: "改动：" before it says nothing.
    typed = "" if cls.type == "other" else f"{label}："
    if HAN.search(text):
        said = text if _CHINESE_VERBS.match(text) else f"{typed}{text}"
        scopes = [m for m in cls.modules[:2] if HAN.search(m)]
        return f"【{'、'.join(scopes)}】{said}" if scopes else said
    first, _, rest = text.partition(" ")
    verb = lexicon().forms.get(first.lower())
    if rest and verb is not None and lexicon().verbs[verb].zh == label:
        text = rest
    return f"{typed}{sentence_case(text)}"


@lru_cache(maxsize=4096)
def headline(text: str, kind: str) -> Headline:
    """The title `text` (its tags and type prefix removed) of a PR of type `kind`, said
    in Chinese and opening with a Chinese word."""
    lx = lexicon()
    label = lx.type_label(kind)
    tokens = read_tokens(text)
    parser = TitleParser(tokens, lx)
    said: str | None = None
    verb: Verb | None = None
    opening = parser.verb_at(1 if tokens and tokens[0].low in lx.adverbs else 0)
    if opening is not None:
        verb = opening[1]
        said = parser.verb_phrase()
    if said is None:
        parser.pos = 0
        subject = parser.noun()
        following = parser.verb_at(parser.pos) if subject else None
        if subject and following:
            verb = following[1]
            rest = parser.verb_phrase()
            said = join_words([subject, rest]) if rest else None
    if said is None and opening is None:
        # A title opening with a verb is a verb phrase, never a noun phrase ("Build ...").
        parser.pos, verb = 0, None
        noun = parser.nouns()
        if noun is not None and (parser.pos > 1 or parser.at_end):
            # One word and more after it: a verb the lexicon does not know ("Port in X").
            said = _noun_title(noun, label) + _noun_adjuncts(parser) + parser.tail()
    if said is None or not _may_end_before(parser, verb) or (
            verb is None and parser.low() == "to"):
        # A noun phrase followed by "to ..." was a verb not known as one ("size X to Y").
        names = _names(tokens, lx)
        return Headline(f"{label}：{'、'.join(names)}" if names else label, "type")
    if not starts_in_chinese(said):
        said = f"{label}：{said}"
    whole = parser.at_end and not parser.dropped
    return Headline(said, "whole" if whole else "head")


def _noun_adjuncts(parser: TitleParser) -> str:
    """What a noun title's prepositions add ("sharded delta weight sync over NCCL for
    disaggregated rollout"), said after it in parentheses ("（通过 NCCL、为分离式
    rollout）"), and a parenthesis of names after them as written; "" where none is
    read whole."""
    said: list[str] = []
    names = ""
    while not parser.at_end:
        token = parser.tokens[parser.pos]
        if token.kind == "paren" and not names:
            names = parser.paren_names(token.text) or ""
            if not names:
                break
            parser.pos += 1
            continue
        word = parser.low()
        form = parser.lx.adjuncts.get(word)
        target = parser.after(1, parser.nouns) if form else None
        if form is None or target is None:
            break
        said.append(tidy(form.format(t=target)))
    return (f"（{'、'.join(said)}）" if said else "") + names


def _noun_title(noun: str, label: str) -> str:
    """A title that is a noun phrase, said after its type; "X support" says 支持 X and
    "X bug fix" 修复：X."""
    if noun.endswith("支持") and len(noun) > 2:
        return join_words(["支持", noun[:-2]])
    for ending in ("bug 修复", "修复"):
        if noun.endswith(ending) and len(noun) > len(ending):
            return f"修复：{noun[: -len(ending)].strip()}"
    return f"{label}：{noun}"
