"""The questions a team lead types about the week, in English and Chinese, read from the
words the grammar leaves once weeks, PR references and filler words are out:
`what changed in npu this week?`, `本周 rollout 有什么变化`, `npu 本周`, `who merged the
most this week`, `谁 review 最多`, `上周和这周比怎么样`, `what is waiting for review`,
`待 review 的 PR`, `你好`. The week's risks (`哪些 PR 有风险`) are the grammar's `risks`
without a PR.

`read_question` gives the kind and what it is about, or None for words that ask none of
these (the grammar then answers with the help).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.models import CommandKind

GREETINGS = frozenset({
    "hi", "hello", "hey", "hiya", "howdy", "yo", "hallo", "morning", "gm", "greetings",
    "你好", "您好", "嗨", "哈喽", "哈啰", "早", "早上好", "下午好", "晚上好", "在吗", "在么",
    "大家好",
})
"""Words that only greet: a message of nothing else gets the introduction."""
_GREETING_FILLERS = frozenset({"there", "good", "bot", "all", "everyone", "team", "啊", "呀"})

# What changed in an area.
_CHANGE_WORDS = frozenset({
    "changed", "change", "changes", "new", "happened", "happening", "updates", "update",
    "updated", "progress", "going", "news", "landed", "merged-in",
    "变化", "变更", "改动", "改了", "改", "更新", "进展", "动态", "新变化", "新东西", "新功能",
    "有变化", "合入", "合了",
})
_AREA_FILLERS = frozenset({"模块", "方面", "相关", "领域", "部分", "里", "中", "上", "area",
                           "module", "topic", "side", "front", "this", "week", "on"})
_CHANGE_RUN = re.compile("|".join(sorted(
    (w for w in _CHANGE_WORDS if re.match(r"[\u4e00-\u9fff]", w)), key=len, reverse=True)))
_AREA_RUN = re.compile("|".join(sorted(
    (w for w in _AREA_FILLERS if re.match(r"[\u4e00-\u9fff]", w)), key=len, reverse=True)))

_CJK_CHARS = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_GAP = re.compile(rf"(?<=[{_CJK_CHARS}])\s+(?=[{_CJK_CHARS}])")

# People.
_WHO = re.compile(r"^(?:who|whos|whom)$|谁")
_PEOPLE_WORDS = frozenset({"contributors", "contributor", "people", "authors", "reviewers",
                           "贡献者", "作者", "评审人", "审查人", "参与者", "活跃"})
_REVIEWED = re.compile(r"^(?:review|reviews|reviewed|reviewing|reviewers|reviewer)$"
                       r"|评审|审查|审核|审阅|review")
_MERGED = re.compile(r"^(?:merged|merge|merges|authored|wrote|contributed|opened|shipped|"
                     r"landed|active|most|prs|commits?)$|合并|合入|提交|贡献|活跃|写")

# This week against the last.
_COMPARE = re.compile(r"^(?:compare|compared|comparison|vs|versus|against|than)$"
                      r"|对比|比较|相比|比")

# Waiting for review.
_WAITING = re.compile(r"^(?:waiting|wait|waits|pending|awaiting|needing|needs|need|open|"
                      r"unreviewed|queue|requested|requests)$|等待|在等|等着|待|等|未")
_REVIEW = re.compile(r"^(?:review|reviews|reviewed|reviewer|reviewers|cr)$"
                     r"|评审|审查|审核|审阅|review")
_UNREVIEWED = frozenset({"unreviewed", "未评审", "未审查", "没人review", "没人评审"})


@dataclass(frozen=True)
class Question:
    """A question read from words: its kind, and the area (`changes`) or which people
    (`people`: "merged" or "reviewed") it is about."""

    kind: CommandKind
    area: str = ""
    value: str = ""


def is_greeting(words: list[str]) -> bool:
    """Whether the words only greet (`hello there`, `你好`)."""
    meaningful = [w for w in words if w not in _GREETING_FILLERS]
    return bool(meaningful) and all(w in GREETINGS for w in meaningful)


def without_greeting(words: list[str]) -> list[str]:
    """The words after a greeting that opens them (`hi, risks for #7035`)."""
    rest = list(words)
    while rest and rest[0] in GREETINGS | _GREETING_FILLERS and len(rest) > 1:
        rest.pop(0)
    return rest


def read_question(words: list[str], *, weeks: int, pulls: int) -> Question | None:
    """The question `words` ask (the grammar took `weeks` weeks and `pulls` PR
    references out of the text), or None."""
    if pulls:
        return None
    if is_greeting(words) and not weeks:
        return Question("hello")
    words = without_greeting(words)
    if words and (any(_WHO.search(w) for w in words) or
                  any(w in _PEOPLE_WORDS for w in words)):
        if any(_REVIEWED.search(w) for w in words) and not any(
                w in ("merged", "合并", "合入") for w in words):
            return Question("people", value="reviewed")
        if any(_MERGED.search(w) for w in words) or any(w in _PEOPLE_WORDS for w in words):
            return Question("people", value="merged")
    waiting = any(w in _UNREVIEWED for w in words) or (
        any(_WAITING.search(w) for w in words) and any(_REVIEW.search(w) for w in words))
    if waiting and not weeks:
        return Question("pending")
    if weeks and any(_COMPARE.search(w) for w in words):
        return Question("compare")
    if weeks == 2 and not words:
        return Question("compare")
    changed, area = _area(words)
    if area:
        return Question("changes", area=area)
    if changed:  # `what changed this week`: the week's digest
        return Question("digest")
    if weeks == 1 and len(words) == 1 and _plain_name(words[0]):
        return Question("changes", area=words[0])
    return None


def _plain_name(word: str) -> bool:
    """Words that can name an area (`npu`, `data loading`, `国产硬件`), not a sentence:
    at most two words."""
    parts = word.split()
    return (0 < len(word) <= 40 and len(parts) <= 2 and not any(c in word for c in "?!")
            and not any(part.isdigit() for part in parts))  # a number is a PR


def _area(words: list[str]) -> tuple[bool, str]:
    """Whether the words ask what changed, and in which area: the words left once the
    change words and the area fillers are gone ("" for the whole week)."""
    changed = False
    rest: list[str] = []
    for word in words:
        if word in _CHANGE_WORDS:
            changed = True
            continue
        if re.match(r"[\u4e00-\u9fff]", word):
            stripped, count = _CHANGE_RUN.subn("", word)
            changed = changed or count > 0
            word = _AREA_RUN.sub("", stripped)
            if not word:
                continue
        if word in _AREA_FILLERS:
            continue
        rest.append(word)
    # Chinese is written without spaces: the grammar reads `国产 硬件` as `国产硬件`.
    area = _CJK_GAP.sub("", " ".join(rest))
    if not changed or (area and not _plain_name(area)):
        return False, ""
    return True, area
