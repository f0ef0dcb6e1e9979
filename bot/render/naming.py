"""How the digest names a PR in its lines: by its title said in Chinese in zh
(`bot.engine.headline`), as written in en; and which of its body's sentences a zh
line may add without saying the title twice."""

from __future__ import annotations

import re

from bot.engine.lexicon import lexicon
from bot.engine.text import restates
from bot.models import KeyPull, PullEntry

# A headline's type before its noun phrase ("新功能：", "修复："), from the lexicon, after
# the scope a Chinese title names ("【图表】新功能：").
_TYPE_LEAD = re.compile("^(【[^】]*】)?(?:" + "|".join(map(re.escape, lexicon().types.values()))
                        + ")：")
_TYPE_LABELS = frozenset(lexicon().types.values())
# What opens a headline's purpose ("，以修复 …"), and the word of a purpose that fixes.
_PURPOSE = "，以"
_FIX_WORD = "修复"


def bare(headline: str) -> bool:
    """Whether a headline is its type alone ("修复"): the lexicon could say nothing more
    of the title."""
    return headline in _TYPE_LABELS


# A name of fewer Chinese characters than this, or of one Latin word, says too little to
# stand for a week's notable change ("国际化", "exportdata").
_FEW_HAN = 5


def says_little(item: KeyPull) -> bool:
    """Whether a PR's name says too little to stand among the summary's notable changes
    (its title is one word: `Dev v2@fixexportdata`, `feat: 国际化`); it is still listed
    under its theme and among the key PRs."""
    said = re.sub(r"^【[^】]*】", "", mention(item))
    han = sum(1 for ch in said if "\u3400" <= ch <= "\u9fff")
    # A Latin word says about as much as two Chinese characters: "实现 Nemotron 3 Nano
    # Omni" names a model, "修复 bug" names nothing.
    latin = len(re.findall(r"[A-Za-z0-9][\w.+-]*", said))
    return bare(item.headline) or (han + 2 * latin < _FEW_HAN if han else
                                   len(said.split()) < 2)


def title_of(item: KeyPull | PullEntry) -> str:
    """How the digest names a PR in its sentences: by its title said in Chinese in zh,
    by its title as written in en. A title said only by its type ("修复") is said by
    the fact that names what it fixes ("修复竞态问题") where there is one."""
    if isinstance(item, KeyPull) and bare(item.headline):
        return next((f for f in item.facts if f.startswith(item.headline)), item.headline)
    return item.headline or item.short_title


def mention(item: KeyPull | PullEntry) -> str:
    """A PR named in a list of its own kind ("重要新功能：…"): its headline without the
    type it opens with ("新功能：分片 delta 权重同步" -> "分片 delta 权重同步"); a fix
    said as what it does and, after "，以", the fix it makes ("在 X 下返回 3-tuple，以在
    CP>1 时修复 …梯度爆炸") by the fix."""
    if not item.headline:
        return item.short_title
    _, _, purpose = item.headline.partition(_PURPOSE)
    if purpose and item.type == "fix" and _FIX_WORD in purpose:
        return purpose
    return _TYPE_LEAD.sub(r"\1", item.headline, count=1) or item.headline


def without_scope(line: str, scope: str) -> str:
    """A line under a theme without the scope that names the theme again ("【图表】修复：
    …" under 图表 is "修复：…")."""
    return line.removeprefix(f"【{scope}】") or line


def quick_join(k: KeyPull) -> str:
    """What joins a key PR's title and the facts that follow it: a colon, or where the
    title has a colon or a comma of its own, an opening parenthesis (closed by
    `quick_close`): "修复：…，回调不会清理（改动 9 个文件共 323 行）"."""
    return "（" if _PARTS.search(title_of(k)) else "："


def quick_close(k: KeyPull) -> str:
    return "）" if _PARTS.search(title_of(k)) else ""


_PARTS = re.compile("[：，]")


def change_sentence(k: KeyPull) -> str:
    """The body's sentence that says a key PR's change, "" where it only says the title
    again ("Enable vllm patch." under "Restore vllm patch")."""
    return "" if not k.line or restates(k.line, k.title) else k.line


def same_words(a: str, b: str) -> bool:
    """Whether two texts say the same, ignoring case, spacing and a final full stop."""
    def norm(text: str) -> str:
        return " ".join(text.lower().rstrip(".。…").split())
    return norm(a) == norm(b)
